// SPDX-License-Identifier: MIT
#pragma once
// Exceptions thrown by hypertune. Every message names the culprit (a parameter, an option, a file).

#include <stdexcept>
#include <string>

namespace hypertune {

/// Base of every exception hypertune throws.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A bad argument from the caller: an invalid range, an unknown name, a wrong type, a bad option.
/// Thrown before any trial runs whenever the problem can be seen that early.
class InvalidArgument : public Error {
public:
    using Error::Error;
};

/// A file could not be read or written, or its content is not what was expected.
class IoError : public Error {
public:
    using Error::Error;
};

/// A strategy broke the protocol with its runner (a new trial beyond the budget, an unknown trial
/// id). The Tuner ends the run with this message as its stop reason; completed trials are kept.
class StrategyError : public Error {
public:
    using Error::Error;
};

}  // namespace hypertune
