// Whether a program can behave differently on different ranks. Only the
// builtin `rank` differs between ranks (a sharded tensor's local shape is
// the same slice size everywhere), so a program that never names it issues
// the same work on every rank, and checking one rank checks them all. An
// `if` whose condition names `rank` counts: its branches may differ by rank.
#pragma once

#include "ir/ir.h"

namespace hostir {

bool namesRank(const Program& program);

}  // namespace hostir
