// SPDX-License-Identifier: MIT
// hypertune::compiled: the HTML report.
#include <hypertune/impl/report.hpp>
