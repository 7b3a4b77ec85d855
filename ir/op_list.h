// Every operation of the language, one row each, in OpKind order: every
// fact about it that depends on which operation it is. Each layer expands
// the list into its own table (an X-macro), so that a rule missing for an
// operation, or named wrongly, fails to compile, and no code outside the
// tables dispatches on OpKind. The columns:
//
//   Kind      the OpKind (ir/ops.h)
//   Spelling  its name in programs
//   Operands  its operand specs (ir/ops.cpp: names, kinds, effects)
//   Mode      how it defines names (ResultMode)
//   Value     the kind of value it defines (ValueKind)
//   Category  its OpCategory (ir/ops.h)
//   Cost      how its flops and bytes are counted (CostRule)
//   Shape     its result's ResultShape (ir/ops.cpp's named shapes)
//   Flops     flops per result element, for the Elementwise and
//             RowReduction cost rules (an exponential or erf counts as one)
//   Kernel    its KernelFamily (ir/ops.h): how the backends compute it
//   Result    its result's type, symbolically: ir/symbolic_types.cpp's
//             `<Result>Result` (table: by Shape; none: no tensor); a
//             shape that is not an operand's is ir/result_shape.h's, the
//             rule every layer computes it by
//   Check     its shape rule: a ShapeChecker member (ir/shape_checker.h);
//             a computation's names a ComputeRules member through
//             checkComputation (ir/verify_compute.cpp)
//   Issue     its issue rule: a function of runtime/issue_rules.h, or of
//             runtime/issue_compute.cpp for a computation
//
// The rules that several rows share are written once, below, as bundles of
// the last three columns.
#pragma once

// clang-format off
#define HOSTIR_ELEMENTWISE_UNARY_RULES table, checkComputation<&ComputeRules::likeX<operands::Unary>>, \
                                       issueLikeX<operands::Unary>
#define HOSTIR_ELEMENTWISE_BINARY_RULES(O) table, checkComputation<&ComputeRules::binaryElementwise<operands::O>>, \
                                           issueBinaryElementwise<operands::O>
#define HOSTIR_COMMUNICATION_RULES none, checkCommunication, issueCommunication

// A row, with its bundles expanded into columns.
#define HOSTIR_OP_ROW(X, ...) X(__VA_ARGS__)

#define HOSTIR_OP_LIST(X)                                                                                              \
  HOSTIR_OP_ROW(X, Allocate, "allocate", kAllocate, Required, Tensor, Allocation, Fill, {}, 0, None,                   \
                typed, checkAllocate, issueAllocate)                                                                   \
  HOSTIR_OP_ROW(X, Deallocate, "deallocate", kDeallocate, None, Tensor, Deallocation, None, {}, 0, None,               \
                none, checkDeallocate, issueDeallocate)                                                                \
  HOSTIR_OP_ROW(X, ShardByStream, "shard_by_stream", kShardByStream, Required, Tensor, View, None, {}, 0, None,        \
                shard, checkShardByStream, issueShardByStream)                                                         \
  /* reshape: a view of a contiguous tensor with new dims */                                                           \
  HOSTIR_OP_ROW(X, Reshape, "reshape", kReshape, Required, Tensor, View, None, {}, 0, None,                            \
                typed, checkReshape, issueReshape)                                                                     \
  HOSTIR_OP_ROW(X, Linear, "linear", kLinear, OutOrResult, Tensor, Compute, Linear, kLinearResult, 0, Linear,          \
                linear, checkComputation<&ComputeRules::linear>, issueLinear)                                          \
  HOSTIR_OP_ROW(X, Matmul, "matmul", kMatmul, OutOrResult, Tensor, Compute, Matmul, kMatmulResult, 0, Matmul,          \
                matmul, checkComputation<&ComputeRules::matmul>, issueMatmul)                                          \
  /* transpose: a copy with the axes permuted */                                                                       \
  HOSTIR_OP_ROW(X, Transpose, "transpose", kTranspose, OutOrResult, Tensor, Copy, Copy, kTransposeResult, 0, None,     \
                transpose, checkTranspose, issueTranspose)                                                             \
  HOSTIR_OP_ROW(X, Copy, "copy", kCopy, OutOrResult, Tensor, Copy, Copy, {operands::Copy::src}, 0, None,               \
                table, checkCopy, issueCopy)                                                                           \
  HOSTIR_OP_ROW(X, Add, "add", kBinary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                  \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Add))                                                                  \
  HOSTIR_OP_ROW(X, Sub, "sub", kBinary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                  \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Sub))                                                                  \
  HOSTIR_OP_ROW(X, Mul, "mul", kBinary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                  \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Mul))                                                                  \
  HOSTIR_OP_ROW(X, Div, "div", kBinary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                  \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  /* maximum, minimum: NaN when either side is NaN, as NumPy */                                                        \
  HOSTIR_OP_ROW(X, Maximum, "maximum", kBinary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,          \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  HOSTIR_OP_ROW(X, Minimum, "minimum", kBinary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,          \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  /* comparisons: 1 where true, 0 where false, in the operands' dtype; NaN compares false (ne: true) */                \
  HOSTIR_OP_ROW(X, Gt, "gt", kBinary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                    \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  HOSTIR_OP_ROW(X, Ge, "ge", kBinary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                    \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  HOSTIR_OP_ROW(X, Lt, "lt", kBinary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                    \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  HOSTIR_OP_ROW(X, Le, "le", kBinary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                    \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  HOSTIR_OP_ROW(X, Eq, "eq", kBinary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                    \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  HOSTIR_OP_ROW(X, Ne, "ne", kBinary, OutOrResult, Tensor, Compute, Elementwise, kLikeA, 1, Binary,                    \
                HOSTIR_ELEMENTWISE_BINARY_RULES(Binary))                                                               \
  /* where: a select; c and b broadcast to a's shape */                                                                \
  HOSTIR_OP_ROW(X, Where, "where", kWhere, OutOrResult, Tensor, Compute, Elementwise, kLikeWhereA, 1, Where,           \
                table, checkComputation<&ComputeRules::where>, issueWhere)                                             \
  HOSTIR_OP_ROW(X, Relu, "relu", kUnary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                  \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  /* silu: x / (1 + exp(-x)): a negation, an exponential, an add, a division */                                        \
  HOSTIR_OP_ROW(X, Silu, "silu", kUnary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 4, Unary,                  \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  /* gelu: x · 0.5 · (1 + erf(x / √2)): a scaling, an erf, an add, two products */                                     \
  HOSTIR_OP_ROW(X, Gelu, "gelu", kUnary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 5, Unary,                  \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Exp, "exp", kUnary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                    \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Log, "log", kUnary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                    \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Sqrt, "sqrt", kUnary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                  \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  /* rsqrt: a square root and a division */                                                                            \
  HOSTIR_OP_ROW(X, Rsqrt, "rsqrt", kUnary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 2, Unary,                \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  /* sigmoid: 1 / (1 + exp(-x)): a negation, an exponential, an add, a division */                                     \
  HOSTIR_OP_ROW(X, Sigmoid, "sigmoid", kUnary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 4, Unary,            \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Tanh, "tanh", kUnary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                  \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Sin, "sin", kUnary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                    \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Cos, "cos", kUnary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                    \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Abs, "abs", kUnary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                    \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Neg, "neg", kUnary, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Unary,                    \
                HOSTIR_ELEMENTWISE_UNARY_RULES)                                                                        \
  HOSTIR_OP_ROW(X, Scale, "scale", kScale, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 1, Scale,                \
                table, checkComputation<&ComputeRules::likeX<operands::Scale>>, issueLikeX<operands::Scale>)           \
  /* rms_norm: x², the row's sum, x · 1/rms, · w (the row's square root not counted) */                                \
  HOSTIR_OP_ROW(X, RmsNorm, "rms_norm", kRmsNorm, OutOrResult, Tensor, Compute, RowReduction, kLikeX, 4, RmsNorm,      \
                table, checkComputation<&ComputeRules::rmsNorm>, issueLikeX<operands::RmsNorm>)                        \
  /* softmax: the row's max, x - max, exp, the row's sum, · 1/sum */                                                   \
  HOSTIR_OP_ROW(X, Softmax, "softmax", kUnary, OutOrResult, Tensor, Compute, RowReduction, kLikeX, 5, Softmax,         \
                table, checkComputation<&ComputeRules::softmax>, issueLikeX<operands::Unary>)                          \
  /* layer_norm: the row's sum, x - mean, its square, their sum, · 1/σ, · w, + b */                                    \
  HOSTIR_OP_ROW(X, LayerNorm, "layer_norm", kLayerNorm, OutOrResult, Tensor, Compute, RowReduction, kLikeX, 7,         \
                LayerNorm, table, checkComputation<&ComputeRules::layerNorm>, issueLayerNorm)                          \
  /* rope: per element a product with cos, one with sin and their sum (the angles once per row and pair) */            \
  HOSTIR_OP_ROW(X, Rope, "rope", kRope, OutOrResult, Tensor, Compute, Elementwise, kLikeX, 3, Rope,                    \
                table, checkComputation<&ComputeRules::rope>, issueRope)                                               \
  /* sum, mean, max along an axis: one add or comparison per element of x */                                           \
  HOSTIR_OP_ROW(X, Sum, "sum", kReduce, OutOrResult, Tensor, Compute, RowReduction, kReduceResult, 1, Reduce,          \
                reduce, checkComputation<&ComputeRules::reduce>, issueReduce)                                          \
  HOSTIR_OP_ROW(X, Mean, "mean", kReduce, OutOrResult, Tensor, Compute, RowReduction, kReduceResult, 1, Reduce,        \
                reduce, checkComputation<&ComputeRules::reduce>, issueReduce)                                          \
  HOSTIR_OP_ROW(X, Max, "max", kReduce, OutOrResult, Tensor, Compute, RowReduction, kReduceResult, 1, Reduce,          \
                reduce, checkComputation<&ComputeRules::reduce>, issueReduce)                                          \
  HOSTIR_OP_ROW(X, Attention, "attention", kAttention, OutOrResult, Tensor, Compute, Attention, kLikeQ, 0,             \
                Attention, table, checkComputation<&ComputeRules::attention>, issueAttention)                          \
  HOSTIR_OP_ROW(X, MergeAttention, "merge_attention", kMergeAttention, None, Tensor, Compute, Elementwise, kInPlace,   \
                0, MergeAttention, table, checkComputation<&ComputeRules::mergeAttention>, issueMergeAttention)        \
  HOSTIR_OP_ROW(X, GatherRows, "gather_rows", kGatherRows, OutOrResult, Tensor, Compute, Gather, kGatherResult, 0,     \
                GatherRows, gather, checkComputation<&ComputeRules::gatherRows>, issueGatherRows)                      \
  HOSTIR_OP_ROW(X, ScatterAddRows, "scatter_add_rows", kScatterAddRows, None, Tensor, Compute, Gather,                 \
                {operands::ScatterAddRows::out}, 0, ScatterAddRows, table,                                             \
                checkComputation<&ComputeRules::scatterAddRows>, issueScatterAddRows)                                  \
  /* top_k: one comparison per element of x, for each of the few kept */                                                \
  HOSTIR_OP_ROW(X, TopK, "top_k", kTopK, OutsOrResults, Tensor, Compute, RowReduction, kTopKResult, 1, TopK,           \
                topK, checkComputation<&ComputeRules::topK>, issueTopK)                                                \
  /* bucket: MoE dispatch's layout, i32 [buckets, capacity] */                                                         \
  HOSTIR_OP_ROW(X, Bucket, "bucket", kBucket, OutOrResult, Tensor, Compute, Copy, kBucketResult, 0, Bucket,            \
                bucket, checkComputation<&ComputeRules::bucket>, issueBucket)                                          \
  /* fill, iota: a new tensor of the type they name, issued like allocate */                                           \
  HOSTIR_OP_ROW(X, Fill, "fill", kFill, Required, Tensor, Compute, Fill, kTypedResult, 0, Fill,                        \
                typed, checkComputation<&ComputeRules::constant>, issueConstant)                                       \
  HOSTIR_OP_ROW(X, Iota, "iota", kIota, Required, Tensor, Compute, Fill, kTypedResult, 0, Iota,                        \
                typed, checkComputation<&ComputeRules::iota>, issueConstant)                                           \
  HOSTIR_OP_ROW(X, Cast, "cast", kCast, OutOrResult, Tensor, Compute, Copy, kCastResult, 0, Cast,                      \
                cast, checkComputation<&ComputeRules::cast>, issueCast)                                                \
  HOSTIR_OP_ROW(X, Allreduce, "allreduce", kAllreduce, Optional, Handle, Communication, Collective, {}, 0, None,       \
                HOSTIR_COMMUNICATION_RULES)                                                                            \
  HOSTIR_OP_ROW(X, Allgather, "allgather", kAllgather, Optional, Handle, Communication, Collective, {}, 0, None,       \
                HOSTIR_COMMUNICATION_RULES)                                                                            \
  HOSTIR_OP_ROW(X, ReduceScatter, "reduce_scatter", kReduceScatter, Optional, Handle, Communication, Collective, {},   \
                0, None, HOSTIR_COMMUNICATION_RULES)                                                                   \
  HOSTIR_OP_ROW(X, AllToAll, "all_to_all", kAllToAll, Optional, Handle, Communication, Collective, {}, 0, None,        \
                HOSTIR_COMMUNICATION_RULES)                                                                            \
  HOSTIR_OP_ROW(X, Broadcast, "broadcast", kBroadcast, Optional, Handle, Communication, Collective, {}, 0, None,       \
                HOSTIR_COMMUNICATION_RULES)                                                                            \
  HOSTIR_OP_ROW(X, SendRecv, "sendrecv", kSendRecv, Optional, Handle, Communication, Collective, {}, 0, None,          \
                HOSTIR_COMMUNICATION_RULES)                                                                            \
  HOSTIR_OP_ROW(X, Wait, "wait", kWait, None, Handle, Synchronization, None, {}, 0, None,                              \
                none, checkWaitOperand, issueWait)                                                                     \
  HOSTIR_OP_ROW(X, GetCurrentStream, "get_current_stream", {}, Required, Stream, Host, None, {}, 0, None,              \
                none, bindStreamResult, issueGetCurrentStream)                                                         \
  HOSTIR_OP_ROW(X, SetCurrentStream, "set_current_stream", kStreamOperand, None, Stream, Host, None, {}, 0, None,      \
                none, checkStreamOperand, issueSetCurrentStream)                                                       \
  HOSTIR_OP_ROW(X, Synchronize, "synchronize", kStreamOperand, None, Stream, Synchronization, None, {}, 0, None,       \
                none, checkStreamOperand, issueSynchronize)                                                            \
  HOSTIR_OP_ROW(X, RecordEvent, "record_event", {}, Required, Event, Synchronization, None, {}, 0, None,               \
                none, bindStreamResult, issueRecordEvent)                                                              \
  HOSTIR_OP_ROW(X, WaitEvent, "wait_event", kWaitEvent, None, Event, Synchronization, None, {}, 0, None,               \
                none, checkWaitOperand, issueWaitEvent)                                                                \
  /* `n = expr`: binds a name to a host integer (ceildiv, min and max are calls inside the expression); the */         \
  /* parser and printer spell it as a binding, and its spelling is for messages. */                                    \
  HOSTIR_OP_ROW(X, IntValue, "integer binding", kIntValue, Required, Int, Host, None, {}, 0, None,                     \
                none, checkIntValue, issueIntValue)
// clang-format on
