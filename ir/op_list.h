// Every operation of the language, one row each, in OpKind order: the rules
// each layer applies to it, by name. Each layer expands the list into its
// own table (an X-macro), so that a rule missing for an operation, or named
// wrongly, fails to compile, and no code outside the tables dispatches on
// OpKind:
//
//   Kind      the OpKind (ir/ops.h); the spelling, operands, result and
//             cost rule are its row of ir/ops.cpp's signature table
//   Category  its OpCategory (ir/ops.h), known at compile time
//   Result    the type of the tensor it defines, symbolically:
//             ir/symbolic_types.cpp's `<Result>Result` (table: the
//             signature's ResultShape; none: no tensor)
//   Check     its shape rule: a ShapeChecker member (ir/shape_checker.h);
//             a computation's names a ComputeRules member through
//             checkComputation<&ComputeRules::rule> (ir/verify_compute.cpp)
//   Issue     its issue rule: a function of runtime/issue_rules.h, or of
//             runtime/issue_compute.cpp for a computation
//
// A computation's kernels are keyed by OpKind in each backend's table
// (executor/cpu/cpu_kernels.cpp, executor/cuda/cuda_compute.cpp), which is
// checked at compile time to cover every row of category Compute.
#pragma once

// clang-format off
#define HOSTIR_OP_LIST(X)                                                                                             \
  /* Kind          Category         Result    Check                                             Issue */             \
  X(Allocate,       Allocation,      allocate, checkAllocate,                                    issueAllocate)        \
  X(Deallocate,     Deallocation,    none,     checkDeallocate,                                  issueDeallocate)      \
  X(ShardByStream,  View,            shard,    checkShardByStream,                               issueShardByStream)   \
  X(Linear,         Compute,         table,    checkComputation<&ComputeRules::linear>,          issueLinear)          \
  X(Matmul,         Compute,         matmul,   checkComputation<&ComputeRules::matmul>,          issueMatmul)          \
  X(Copy,           Copy,            table,    checkCopy,                                        issueCopy)            \
  X(Add,            Compute,         table,    checkComputation<&ComputeRules::binaryElementwise<operands::Add>>, issueBinaryElementwise<operands::Add>) \
  X(Sub,            Compute,         table,    checkComputation<&ComputeRules::binaryElementwise<operands::Sub>>, issueBinaryElementwise<operands::Sub>) \
  X(Mul,            Compute,         table,    checkComputation<&ComputeRules::binaryElementwise<operands::Mul>>, issueBinaryElementwise<operands::Mul>) \
  X(Relu,           Compute,         table,    checkComputation<&ComputeRules::likeX<operands::Unary>>, issueLikeX<operands::Unary>) \
  X(Silu,           Compute,         table,    checkComputation<&ComputeRules::likeX<operands::Unary>>, issueLikeX<operands::Unary>) \
  X(Gelu,           Compute,         table,    checkComputation<&ComputeRules::likeX<operands::Unary>>, issueLikeX<operands::Unary>) \
  X(Scale,          Compute,         table,    checkComputation<&ComputeRules::likeX<operands::Scale>>, issueLikeX<operands::Scale>) \
  X(RmsNorm,        Compute,         table,    checkComputation<&ComputeRules::rmsNorm>,         issueLikeX<operands::RmsNorm>) \
  X(Softmax,        Compute,         table,    checkComputation<&ComputeRules::softmax>,         issueLikeX<operands::Unary>) \
  X(Attention,      Compute,         table,    checkComputation<&ComputeRules::attention>,       issueAttention)       \
  X(MergeAttention, Compute,         table,    checkComputation<&ComputeRules::mergeAttention>,  issueMergeAttention)  \
  X(GatherRows,     Compute,         gather,   checkComputation<&ComputeRules::gatherRows>,      issueGatherRows)      \
  X(ScatterAddRows, Compute,         table,    checkComputation<&ComputeRules::scatterAddRows>,  issueScatterAddRows)  \
  X(Cast,           Compute,         cast,     checkComputation<&ComputeRules::cast>,            issueCast)            \
  X(Allreduce,      Communication,   none,     checkCommunication,                               issueCommunication)   \
  X(Allgather,      Communication,   none,     checkCommunication,                               issueCommunication)   \
  X(ReduceScatter,  Communication,   none,     checkCommunication,                               issueCommunication)   \
  X(AllToAll,       Communication,   none,     checkCommunication,                               issueCommunication)   \
  X(Broadcast,      Communication,   none,     checkCommunication,                               issueCommunication)   \
  X(SendRecv,       Communication,   none,     checkCommunication,                               issueCommunication)   \
  X(Wait,           Synchronization, none,     checkWaitOperand,                                 issueWait)            \
  X(GetCurrentStream, Host,          none,     bindStreamResult,                                 issueGetCurrentStream) \
  X(SetCurrentStream, Host,          none,     checkStreamOperand,                               issueSetCurrentStream) \
  X(Synchronize,    Synchronization, none,     checkStreamOperand,                               issueSynchronize)     \
  X(RecordEvent,    Synchronization, none,     bindStreamResult,                                 issueRecordEvent)     \
  X(WaitEvent,      Synchronization, none,     checkWaitOperand,                                 issueWaitEvent)       \
  /* `n = expr`: binds a name to a host integer (ceildiv, min and max are calls inside the expression). */     \
  X(IntValue,       Host,            none,     checkIntValue,                                    issueIntValue)
// clang-format on
