// The findings of an error as data (hostir::api::Finding), from the
// diagnostic it was made from or from the report the program check rendered.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hostir/error.h"
#include "ir/diagnostic.h"

namespace hostir::api {

// The diagnostic and its notes, positioned in `path`.
Finding findingOf(const Diagnostic& diag, std::string_view path);

// The findings of a report rendered with renderMessage against `path`
// (formatProgramCheck's): each "PATH[:LINE:COL]: error|remark: MESSAGE"
// line is a finding, each "note" line a note of the finding before it; the
// source line and caret under a positioned line, and lines of any other
// shape (summaries), are skipped.
std::vector<Finding> findingsOfReport(std::string_view report, std::string_view path);

// A check error (ErrorKind::Check): `summary` as its message, `report` and
// then `closing` (summary lines, advice) as its text, the findings of
// `report` as data.
Error checkError(std::string summary, std::string report, std::string_view closing, std::string_view path);

}  // namespace hostir::api
