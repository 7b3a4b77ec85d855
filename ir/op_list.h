// Every operation of the language, one row each, in OpKind order: every
// fact about it that depends on which operation it is. Each layer expands
// the list into its own table (an X-macro), so that a rule missing for an
// operation, or named wrongly, fails to compile, and no code outside the
// tables dispatches on OpKind. The columns:
//
//   Kind      the OpKind (ir/ops.h)
//   Spelling  its name in programs
//   Operands  its operand specs: the `operands::` struct of ir/ops.h that
//             holds them (names, kinds, effects, defaults) beside its
//             typed positions
//   Mode      how it defines names (ResultMode)
//   Value     the kind of value it defines (ValueKind)
//   Category  its OpCategory (ir/ops.h)
//   Cost      how its flops and bytes are counted (CostRule)
//   Shape     its result's ResultShape (ir/ops.cpp's named shapes)
//   Flops     flops per result element, for the Elementwise and
//             RowReduction cost rules (an exponential or erf counts as one)
//   Kernel    its KernelFamily (HOSTIR_KERNEL_FAMILY_LIST, below): how the
//             backends compute it
//   Result    its result's type, symbolically: ir/symbolic_types.cpp's
//             `<Result>Result` (table: by Shape; none: no tensor); a
//             shape that is not an operand's is ir/result_shape.h's, the
//             rule every layer computes it by
//   Check     its shape rule: a ShapeChecker member (ir/shape_checker.h);
//             a computation's names a ComputeRules member through
//             checkComputation (ir/verify_compute.cpp)
//   Issue     its issue rule: a function of runtime/issue_rules.h, or of
//             runtime/issue_compute.cpp for a computation (issueLikeX for
//             one shaped like x, whatever its other operands)
//
// The rules that several rows share are written once, below, as bundles of
// the last three columns.
#pragma once

// clang-format off
// An operation shaped like x whose other operands need no check but their
// specs' (an axis in range): the verifier's and the evaluator's rules read
// the operands' specs (ir/ops.h), so the operation needs no rule of its own.
#define HOSTIR_LIKE_X_RULES(O) table, checkComputation<&ComputeRules::likeX<operands::O>>, issueLikeX<operands::O>
#define HOSTIR_ELEMENTWISE_UNARY_RULES HOSTIR_LIKE_X_RULES(Unary)
#define HOSTIR_ELEMENTWISE_BINARY_RULES(O) table, checkComputation<&ComputeRules::binaryElementwise<operands::O>>, \
                                           issueBinaryElementwise<operands::O>
#define HOSTIR_COMMUNICATION_RULES none, checkCommunication, issueCommunication

// Every kernel family (the Kernel column) but None, in KernelFamily order
// (ir/ops.h). Each backend declares one kernel per family from this list
// and builds its table by the same expansion, so a family whose kernel is
// missing does not link. A family of several operations keys its own by
// OpKind in the file of its concept.
#define HOSTIR_KERNEL_FAMILY_LIST(X)                                                                                   \
  X(Linear)                                                                                                            \
  X(Matmul)                                                                                                            \
  X(Unary)          /* y = f(x), elementwise (HOSTIR_ELEMENTWISE_UNARY_RULES) */                                       \
  X(Binary)         /* y = f(a, b), b broadcast to a's shape */                                                        \
  X(Scale)                                                                                                             \
  X(RmsNorm)                                                                                                           \
  X(Softmax)                                                                                                           \
  X(Attention)                                                                                                         \
  X(MergeAttention)                                                                                                    \
  X(GatherRows)                                                                                                        \
  X(ScatterAddRows)                                                                                                    \
  X(Cast)                                                                                                              \
  X(Where)                                                                                                             \
  X(Reduce)         /* sum, mean, max along an axis */                                                                 \
  X(LayerNorm)                                                                                                         \
  X(Rope)                                                                                                              \
  X(Bucket)                                                                                                            \
  X(Fill)                                                                                                              \
  X(Iota)                                                                                                              \
  X(TopK)                                                                                                              \
  X(Cumsum)

// A row, with its bundles expanded into columns.
#define HOSTIR_OP_ROW(X, ...) X(__VA_ARGS__)

#define HOSTIR_OP_LIST(X)                                                                                              \
  HOSTIR_OP_ROW(X, Allocate, "allocate", Allocate, Required, Tensor, Allocation, Fill, {}, 0, None,                   \
                typed, checkAllocate, issueAllocate)                                                                   \
  HOSTIR_OP_ROW(X, Deallocate, "deallocate", Deallocate, None, Tensor, Deallocation, None, {}, 0, None,               \
                none, checkDeallocate, issueDeallocate)                                                                \
  HOSTIR_OP_ROW(X, ShardByStream, "shard_by_stream", ShardByStream, Required, Tensor, View, None, {}, 0, None,        \
                shard, checkShardByStream, issueShardByStream)                                                         \
  /* reshape: a view of a contiguous tensor with new dims */                                                           \
  HOSTIR_OP_ROW(X, Reshape, "reshape", Reshape, Required, Tensor, View, None, {}, 0, None,                            \
                typed, checkReshape, issueReshape)                                                                     \
  HOSTIR_OP_ROW(X, Linear, "linear", Linear, OutOrResult, Tensor, Compute, Linear, kLinearResult, 0, Linear,          \
                linear, checkComputation<&ComputeRules::linear>, issueLinear)                                          \
  HOSTIR_OP_ROW(X, Matmul, "matmul", Matmul, OutOrResult, Tensor, Compute, Matmul, kMatmulResult, 0, Matmul,          \
                matmul, checkComputation<&ComputeRules::matmul>, issueMatmul)                                          \
  /* transpose: a copy with the axes permuted */                                                                       \
  HOSTIR_OP_ROW(X, Transpose, "transpose", Transpose, OutOrResult, Tensor, Copy, Copy, kTransposeResult, 0, None,     \
                transpose, checkTranspose, issueTranspose)                                                             \
  HOSTIR_OP_ROW(X, Copy, "copy", Copy, OutOrResult, Tensor, Copy, Copy, {operands::Copy::src}, 0, None,               \
                table, checkCopy, issueCopy)                                                                           \
  HOSTIR_OP_ROW(X, Add, "add", Binary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                  \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Add))                                                                  \
  HOSTIR_OP_ROW(X, Sub, "sub", Binary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                  \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Sub))                                                                  \
  HOSTIR_OP_ROW(X, Mul, "mul", Binary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                  \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Mul))                                                                  \
  HOSTIR_OP_ROW(X, Div, "div", Binary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                  \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  /* maximum, minimum: NaN when either side is NaN, as NumPy */                                                        \
  HOSTIR_OP_ROW(X, Maximum, "maximum", Binary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,          \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  HOSTIR_OP_ROW(X, Minimum, "minimum", Binary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,          \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  /* comparisons: 1 where true, 0 where false, in the operands' dtype; NaN compares false (ne: true) */                \
  HOSTIR_OP_ROW(X, Gt, "gt", Binary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                    \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  HOSTIR_OP_ROW(X, Ge, "ge", Binary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                    \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  HOSTIR_OP_ROW(X, Lt, "lt", Binary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                    \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  HOSTIR_OP_ROW(X, Le, "le", Binary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                    \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  HOSTIR_OP_ROW(X, Eq, "eq", Binary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                    \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  HOSTIR_OP_ROW(X, Ne, "ne", Binary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                    \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  /* where: a select; c and b broadcast to a's shape */                                                                \
  HOSTIR_OP_ROW(X, Where, "where", Where, OutOrResult, Tensor, Compute, Elementwise, kLikeWhereA, 1, Where,           \
                table, checkComputation<&ComputeRules::where>, issueWhere)                                             \
  HOSTIR_OP_ROW(X, Relu, "relu", Unary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                  \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  /* silu: x / (1 + exp(-x)): a negation, an exponential, an add, a division */                                        \
  HOSTIR_OP_ROW(X, Silu, "silu", Unary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 4, Unary,                  \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  /* gelu: x · 0.5 · (1 + erf(x / √2)): a scaling, an erf, an add, two products */                                     \
  HOSTIR_OP_ROW(X, Gelu, "gelu", Unary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 5, Unary,                  \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Exp, "exp", Unary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                    \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Log, "log", Unary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                    \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Sqrt, "sqrt", Unary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                  \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  /* rsqrt: a square root and a division */                                                                            \
  HOSTIR_OP_ROW(X, Rsqrt, "rsqrt", Unary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 2, Unary,                \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  /* sigmoid: 1 / (1 + exp(-x)): a negation, an exponential, an add, a division */                                     \
  HOSTIR_OP_ROW(X, Sigmoid, "sigmoid", Unary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 4, Unary,            \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Tanh, "tanh", Unary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                  \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Sin, "sin", Unary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                    \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Cos, "cos", Unary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                    \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Abs, "abs", Unary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                    \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Neg, "neg", Unary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                    \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Scale, "scale", Scale, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Scale,                \
                HOSTIR_LIKE_X_RULES(Scale))           \
  /* rms_norm: x², the row's sum, x · 1/rms, · w (the row's square root not counted) */                                \
  HOSTIR_OP_ROW(X, RmsNorm, "rms_norm", RmsNorm, OutOrResult, Tensor, Compute, RowReduction, kLikeX, 4, RmsNorm,      \
                table, checkComputation<&ComputeRules::rmsNorm>, issueLikeX<operands::RmsNorm>)                        \
  /* softmax: the row's max, x - max, exp, the row's sum, · 1/sum */                                                   \
  HOSTIR_OP_ROW(X, Softmax, "softmax", Unary, OutOrResult, Tensor, Compute, RowReduction, kLikeX, 5, Softmax,         \
                table, checkComputation<&ComputeRules::softmax>, issueLikeX<operands::Unary>)                          \
  /* layer_norm: the row's sum, x - mean, its square, their sum, · 1/σ, · w, + b */                                    \
  HOSTIR_OP_ROW(X, LayerNorm, "layer_norm", LayerNorm, OutOrResult, Tensor, Compute, RowReduction, kLikeX, 7,         \
                LayerNorm, table, checkComputation<&ComputeRules::layerNorm>, issueLikeX<operands::LayerNorm>)                          \
  /* rope: per element a product with cos, one with sin and their sum (the angles once per row and pair) */            \
  HOSTIR_OP_ROW(X, Rope, "rope", Rope, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 3, Rope,                    \
                table, checkComputation<&ComputeRules::rope>, issueLikeX<operands::Rope>)                                               \
  /* sum, mean, max along an axis: one add or comparison per element of x */                                           \
  HOSTIR_OP_ROW(X, Sum, "sum", Reduce, OutOrResult, Tensor, Compute, RowReduction, kReduceResult, 1, Reduce,          \
                reduce, checkComputation<&ComputeRules::reduce>, issueReduce)                                          \
  HOSTIR_OP_ROW(X, Mean, "mean", Reduce, OutOrResult, Tensor, Compute, RowReduction, kReduceResult, 1, Reduce,        \
                reduce, checkComputation<&ComputeRules::reduce>, issueReduce)                                          \
  HOSTIR_OP_ROW(X, Max, "max", Reduce, OutOrResult, Tensor, Compute, RowReduction, kReduceResult, 1, Reduce,          \
                reduce, checkComputation<&ComputeRules::reduce>, issueReduce)                                          \
  /* cumsum: the running sum along an axis, like x: one add per element of x */                                        \
  HOSTIR_OP_ROW(X, Cumsum, "cumsum", Cumsum, OutOrResult, Tensor, Compute, RowReduction, {operands::Cumsum::x}, 1,     \
                Cumsum, HOSTIR_LIKE_X_RULES(Cumsum))                                                                   \
  HOSTIR_OP_ROW(X, Attention, "attention", Attention, OutOrResult, Tensor, Compute, Attention, kLikeQ, 0,             \
                Attention, table, checkComputation<&ComputeRules::attention>, issueAttention)                          \
  HOSTIR_OP_ROW(X, MergeAttention, "merge_attention", MergeAttention, None, Tensor, Compute, Elementwise, kInPlace,   \
                0, MergeAttention, table, checkComputation<&ComputeRules::mergeAttention>, issueMergeAttention)        \
  HOSTIR_OP_ROW(X, GatherRows, "gather_rows", GatherRows, OutOrResult, Tensor, Compute, Gather, kGatherResult, 0,     \
                GatherRows, gather, checkComputation<&ComputeRules::gatherRows>, issueGatherRows)                      \
  HOSTIR_OP_ROW(X, ScatterAddRows, "scatter_add_rows", ScatterAddRows, None, Tensor, Compute, Gather,                 \
                {operands::ScatterAddRows::out}, 0, ScatterAddRows, table,                                             \
                checkComputation<&ComputeRules::scatterAddRows>, issueScatterAddRows)                                  \
  /* top_k: one comparison per element of x, for each of the few kept */                                                \
  HOSTIR_OP_ROW(X, TopK, "top_k", TopK, OutsOrResults, Tensor, Compute, RowReduction, kTopKResult, 1, TopK,           \
                topK, checkComputation<&ComputeRules::topK>, issueTopK)                                                \
  /* bucket: MoE dispatch's layout, i32 [buckets, capacity] */                                                         \
  HOSTIR_OP_ROW(X, Bucket, "bucket", Bucket, OutOrResult, Tensor, Compute, Copy, kBucketResult, 0, Bucket,            \
                bucket, checkComputation<&ComputeRules::bucket>, issueBucket)                                          \
  /* fill, iota: a new tensor of the type they name, issued like allocate */                                           \
  HOSTIR_OP_ROW(X, Fill, "fill", Fill, Required, Tensor, Compute, Fill, kTypedResult, 0, Fill,                        \
                typed, checkComputation<&ComputeRules::constant>, issueConstant)                                       \
  HOSTIR_OP_ROW(X, Iota, "iota", Iota, Required, Tensor, Compute, Fill, kTypedResult, 0, Iota,                        \
                typed, checkComputation<&ComputeRules::iota>, issueConstant)                                           \
  HOSTIR_OP_ROW(X, Cast, "cast", Cast, OutOrResult, Tensor, Compute, Copy, kCastResult, 0, Cast,                      \
                cast, checkComputation<&ComputeRules::cast>, issueCast)                                                \
  HOSTIR_OP_ROW(X, Allreduce, "allreduce", Allreduce, Optional, Handle, Communication, Collective, {}, 0, None,       \
                HOSTIR_COMMUNICATION_RULES)                                                                            \
  HOSTIR_OP_ROW(X, Allgather, "allgather", Allgather, Optional, Handle, Communication, Collective, {}, 0, None,       \
                HOSTIR_COMMUNICATION_RULES)                                                                            \
  HOSTIR_OP_ROW(X, ReduceScatter, "reduce_scatter", ReduceScatter, Optional, Handle, Communication, Collective, {},   \
                0, None, HOSTIR_COMMUNICATION_RULES)                                                                   \
  HOSTIR_OP_ROW(X, AllToAll, "all_to_all", AllToAll, Optional, Handle, Communication, Collective, {}, 0, None,        \
                HOSTIR_COMMUNICATION_RULES)                                                                            \
  HOSTIR_OP_ROW(X, Broadcast, "broadcast", Broadcast, Optional, Handle, Communication, Collective, {}, 0, None,       \
                HOSTIR_COMMUNICATION_RULES)                                                                            \
  HOSTIR_OP_ROW(X, SendRecv, "sendrecv", SendRecv, Optional, Handle, Communication, Collective, {}, 0, None,          \
                HOSTIR_COMMUNICATION_RULES)                                                                            \
  HOSTIR_OP_ROW(X, Wait, "wait", Wait, None, Handle, Synchronization, None, {}, 0, None,                              \
                none, checkWaitOperand, issueWait)                                                                     \
  HOSTIR_OP_ROW(X, GetCurrentStream, "get_current_stream", None, Required, Stream, Host, None, {}, 0, None,              \
                none, bindStreamResult, issueGetCurrentStream)                                                         \
  HOSTIR_OP_ROW(X, SetCurrentStream, "set_current_stream", StreamOperand, None, Stream, Host, None, {}, 0, None,      \
                none, checkStreamOperand, issueSetCurrentStream)                                                       \
  HOSTIR_OP_ROW(X, Synchronize, "synchronize", StreamOperand, None, Stream, Synchronization, None, {}, 0, None,       \
                none, checkStreamOperand, issueSynchronize)                                                            \
  HOSTIR_OP_ROW(X, RecordEvent, "record_event", None, Required, Event, Synchronization, None, {}, 0, None,               \
                none, bindStreamResult, issueRecordEvent)                                                              \
  HOSTIR_OP_ROW(X, WaitEvent, "wait_event", WaitEvent, None, Event, Synchronization, None, {}, 0, None,               \
                none, checkWaitOperand, issueWaitEvent)                                                                \
  /* `n = expr`: binds a name to a host integer (ceildiv, min and max are calls inside the expression); the */         \
  /* parser and printer spell it as a binding, and its spelling is for messages. */                                    \
  HOSTIR_OP_ROW(X, IntValue, "integer binding", IntValue, Required, Int, Host, None, {}, 0, None,                     \
                none, checkIntValue, issueIntValue)
// clang-format on
