// SPDX-License-Identifier: MIT
#pragma once
// The report's inline style sheet and its table-sorting script (nothing is fetched).

#include <string_view>

namespace hypertune::detail::report {

inline constexpr std::string_view style_sheet = R"(
body{font:14px/1.45 system-ui,sans-serif;margin:20px auto;max-width:1140px;color:#222;padding:0 10px}
h1{font-size:21px;margin:0 0 4px}h2{font-size:16px;margin:26px 0 8px;border-bottom:1px solid #ddd}
.grid{display:flex;flex-wrap:wrap;gap:10px}.note{color:#666;font-size:12.5px}.warn{color:#a33}
svg{font-size:10.5px;background:#fff;outline:1px solid #e4e4e4;max-width:100%;height:auto}.ttl{font-weight:600;font-size:12px}
.gl{stroke:#eee}.ax{fill:none;stroke:#aaa}.rung{stroke:#555;stroke-dasharray:4 3}
polyline{fill:none;stroke-width:1.1;stroke-opacity:.75}.dot{fill:none;stroke-width:5;stroke-linecap:round}
.C{stroke:#2b6cb0}.S{stroke:#dd8a2a}.F{stroke:#c53030}.R{stroke:#999}.I{stroke:#9f7aea}rect.C,circle.C{fill:#2b6cb0}
rect.S,circle.S{fill:#dd8a2a}rect.F,circle.F{fill:#c53030}rect.R,circle.R{fill:#999}circle.I{fill:#9f7aea}circle.C,circle.S,circle.F,circle.R,circle.I{fill-opacity:.8}
.halo{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
rect.C,rect.S,rect.F,rect.R{stroke:#fff;stroke-width:.7}
circle.P{fill:#111;stroke:#fff;stroke-width:1;r:4px}.dot.S{stroke-opacity:.55}.best{stroke:#111;stroke-width:2;fill:none}.band{fill:#bbb;fill-opacity:.45;stroke:none}
.idle{fill:#f1f1f1}.cat{fill:#f6f6f6}.key i{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px}
table{border-collapse:collapse;font-size:12.5px}td,th{padding:2px 7px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
.kv th{font-weight:500;color:#555}#trials th{cursor:pointer;position:sticky;top:0;background:#f3f3f3}
#trials td:nth-child(n+3){font-variant-numeric:tabular-nums;white-space:nowrap}#trials td.why{min-width:400px;font-size:11.5px;white-space:normal}tr.F td:nth-child(2){color:#c53030}tr.S td:nth-child(2){color:#b86e12}
.bar{background:#2b6cb0;height:11px}.scroll{max-height:640px;overflow:auto;border:1px solid #eee}
)";

// Sorts the table on a header click; `#selftest` in the URL sorts every column once (the browser
// test uses it). The data-report attribute says the script ran to the end without an error.
inline constexpr std::string_view sort_script = R"(
(function(){
var t=document.getElementById('trials');
function key(c){var v=c.getAttribute('data-v'),s=c.textContent,n=parseFloat(v===null?s:v);return isNaN(n)?s:n;}
function sort(i,th){
 var b=t.tBodies[0],d=th.getAttribute('data-dir')==='a'?-1:1;
 th.setAttribute('data-dir',d>0?'a':'d');
 var r=Array.prototype.map.call(b.rows,function(x){return {row:x,k:key(x.cells[i])};});
 r.sort(function(x,y){var a=x.k,c=y.k;
  if(typeof a!==typeof c)return typeof a==='number'?-1:1;return a<c?-d:a>c?d:0;});
 var f=document.createDocumentFragment();r.forEach(function(x){f.appendChild(x.row);});b.appendChild(f);}
if(t){var h=Array.prototype.slice.call(t.tHead.rows[0].cells);
 h.forEach(function(th,i){th.title='click to sort';th.onclick=function(){sort(i,th);};});
 if(location.hash==='#selftest')h.forEach(function(th,i){sort(i,th);sort(i,th);});}
document.body.setAttribute('data-report','ok');
})();
)";

// What every section needs, computed once.

}  // namespace hypertune::detail::report
