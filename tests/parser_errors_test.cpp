// Malformed programs: every one gets exactly one diagnostic whose position
// points at the offending token, never a crash or a hang.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "hostir/lexer.h"
#include "hostir/parser.h"
#include "hostir/printer.h"
#include "hostir/verifier.h"

namespace {

using namespace hostir;

enum class Stage { Parse, Verify };

struct ErrorCase {
  std::string name;
  std::string source;
  std::string where;    // "LINE:COL", or "" for a diagnostic without a position
  std::string message;  // a substring of the message
  Stage stage = Stage::Parse;
  int64_t world = 1;
  std::map<std::string, int64_t> params = {};
  std::string noteWhere = "";    // "LINE:COL" of the one note the error carries, or "" for none
  std::string noteMessage = "";  // the note's exact message
};

// The case, whose diagnostic must carry exactly one note at `where` saying `message`.
ErrorCase withNote(ErrorCase c, std::string where, std::string message) {
  c.noteWhere = std::move(where);
  c.noteMessage = std::move(message);
  return c;
}

ErrorCase P(std::string name, std::string source, std::string where, std::string message) {
  return {std::move(name), std::move(source), std::move(where), std::move(message), Stage::Parse};
}

ErrorCase V(std::string name, std::string source, std::string where, std::string message, int64_t world = 1,
            std::map<std::string, int64_t> params = {}) {
  return {std::move(name), std::move(source), std::move(where), std::move(message), Stage::Verify, world,
          std::move(params)};
}

// `program p(M = 4, N = 8) {` + body + `}`; the body starts on line 2.
std::string prog(const std::string& body) { return "program p(M = 4, N = 8) {\n" + body + "}\n"; }

std::string deepParens(int depth) {
  return "program p() {\n  t = allocate(f32[" + std::string(static_cast<size_t>(depth), '(') + "1" +
         std::string(static_cast<size_t>(depth), ')') + "])\n}\n";
}

std::string deepLoops(int depth) {
  std::string text = "program p() {\n";
  for (int i = 0; i < depth; ++i) text += "for i" + std::to_string(i) + " in range(1) {\n";
  text += "t = allocate(f32[1])\n";
  for (int i = 0; i < depth; ++i) text += "}\n";
  return text + "}\n";
}

std::vector<ErrorCase> errorCases() {
  using namespace std::string_literals;
  return {
      // --- lexical -------------------------------------------------------
      P("bad_character", prog("  t = allocate(f32[4@])\n"), "2:21", "unexpected character '@'"),
      P("binary_byte", prog("\x01\xff\n"), "2:1", "unexpected character byte 0x01"),
      P("high_byte_in_name", prog("  t\xc3\xa9 = allocate(f32[4])\n"), "2:4", "unexpected character byte 0xc3"),
      P("nul_byte", "program p() {\0}"s, "1:14", "unexpected character byte 0x00"),
      P("huge_integer", "program p(M = 99999999999999999999) {\n}\n", "1:15",
        "integer literal 99999999999999999999 does not fit in 64 bits"),
      P("integer_two_to_the_63", "program p(M = 9223372036854775808) {\n}\n", "1:15",
        "integer literal 9223372036854775808 does not fit in 64 bits"),
      P("huge_dimension", prog("  t = allocate(f32[9223372036854775808])\n"), "2:20", "does not fit in 64 bits"),
      P("digits_then_letters", "program p(M = 4k) {\n}\n", "1:16", "unexpected 'k' after a number"),
      // --- syntax --------------------------------------------------------
      P("missing_program", "prog p() {\n}\n", "1:1", "a program must start with 'program NAME(...)'"),
      P("empty_file", "", "1:1", "a program must start with 'program NAME(...)'"),
      P("only_comments", "# nothing\n# here\n", "3:1", "a program must start with 'program NAME(...)'"),
      P("missing_program_name", "program (M = 1) {\n}\n", "1:9", "expected a program name, found '('"),
      P("missing_param_parens", "program p {\n}\n", "1:11", "expected '(' after the program name, found '{'"),
      P("param_without_default", "program p(M) {\n}\n", "1:12", "expected '=' and a default value for parameter 'M'"),
      P("negative_param_default", "program p(M = -1) {\n}\n", "1:15", "expected an integer default value, found '-'"),
      P("duplicate_param", "program p(M = 1, M = 2) {\n}\n", "1:18", "parameter 'M' is defined twice"),
      P("trailing_comma_in_params", "program p(M = 1,) {\n}\n", "1:17", "expected a parameter name, found ')'"),
      P("missing_open_brace", "program p()\n  input x : f32[4]\n}\n", "1:12",
        "expected '{' to open the program body, found end of line"),
      P("missing_open_brace_same_line", "program p() input x : f32[4]\n}\n", "1:13",
        "expected '{' to open the program body, found 'input'"),
      withNote(P("missing_close_brace", "program p() {\n  t = allocate(f32[4])\n", "3:1",
                 "expected '}' to close the program body, found end of file"),
               "1:13", "to match this '{' (the program body)"),
      withNote(P("missing_close_paren", prog("  t = allocate(f32[4]\n"), "3:1",
                 "expected ',' or ')' in the operand list, found '}'"),
               "2:15", "to match this '(' (the operand list)"),
      withNote(P("missing_close_bracket", prog("  t = allocate(f32[4)\n"), "2:21",
                 "expected ',' or ']' in the dimensions, found ')'"),
               "2:19", "to match this '[' (the dimensions)"),
      P("missing_open_paren", prog("  t = allocate f32[4]\n"), "2:16", "expected '(' after 'allocate', found 'f32'"),
      P("line_ends_before_operands", prog("  t = allocate\n  u = allocate(f32[4])\n"), "2:15",
        "expected '(' after 'allocate', found end of line"),
      P("text_after_program", "program p() {\n}\nextra\n", "3:1", "unexpected 'extra' after the end of the program"),
      P("second_program", "program p() {\n}\nprogram q() {\n}\n", "3:1", "unexpected 'program' after the end"),
      P("two_statements_on_a_line", prog("  t = allocate(f32[4]) u = allocate(f32[4])\n"), "2:24",
        "expected end of statement, found 'u'"),
      P("declaration_after_statement", prog("  t = allocate(f32[4])\n  input x : f32[4]\n"), "3:3",
        "declarations must come before the first statement"),
      P("declaration_in_loop", prog("  for i in range(2) {\n    input x : f32[4]\n  }\n"), "3:5",
        "declarations are only allowed at the top of the program"),
      P("declaration_without_type", prog("  input x\n"), "2:10", "expected ':' and a tensor type, found end of line"),
      P("unknown_dtype", prog("  input x : i32[4]\n"), "2:13", "unknown dtype 'i32'; expected f32, f16, bf16 or f64"),
      P("unknown_dtype_in_allocate", prog("  t = allocate(int8[4])\n"), "2:16", "unknown dtype 'int8'"),
      P("type_without_dims", prog("  input x : f32\n"), "2:16",
        "expected '[' and the dimensions of the tensor type, found end of line"),
      P("shard_axis_out_of_range", prog("  input x : f32[4, 4] shard(2)\n"), "2:29",
        "shard axis 2 is out of range for a tensor of rank 2"),
      P("shard_of_scalar", prog("  input x : f32[] shard(0)\n"), "2:25", "shard axis 0 is out of range for a tensor of rank 0"),
      P("shard_axis_not_literal", prog("  input x : f32[4, 4] shard(M)\n"), "2:29", "expected the sharded axis, found 'M'"),
      // The 257th '(' is one level too many (kMaxExprLevels).
      P("deep_parentheses", deepParens(10000), "2:276",
        "expression nested too deeply: more than 256 levels of operators, parentheses and calls"),
      // The 65th 'for' is one loop too many (kMaxLoopNesting).
      P("deep_loops", deepLoops(300), "66:1", "loops nested too deeply: more than 64 levels of 'for'"),
      P("trailing_comma", prog("  t = allocate(f32[4],)\n"), "2:23", "expected an expression, found ')'"),
      P("positional_after_keyword", prog("  t = allocate(zero=true, f32[4])\n"), "2:27",
        "positional operand after a keyword operand"),
      P("duplicate_keyword", prog("  t = allocate(f32[4], zero=true, zero=false)\n"), "2:35", "operand 'zero' is given twice"),
      P("keyword_repeats_positional", prog("  t = allocate(f32[4], type=f32[4])\n"), "2:24", "operand 'type' is given twice"),
      P("unknown_keyword", prog("  t = allocate(f32[4], fill=true)\n"), "2:24", "'allocate' has no operand named 'fill'"),
      P("too_many_operands", prog("  t = allocate(f32[4], true, 1)\n"), "2:30", "'allocate' takes at most 2 operands"),
      P("missing_required_operand", prog("  v = shard_by_stream(x, axis=0, index=0)\n"), "2:7",
        "'shard_by_stream' is missing its operand 'chunks'"),
      P("missing_allgather_out", prog("  allgather(x)\n"), "2:3", "'allgather' is missing its operand 'out'"),
      P("stream_call_where_tensor_belongs", prog("  deallocate(stream(0))\n"), "2:14",
        "operand 't' of 'deallocate' must be a tensor, not stream(...)"),
      P("type_where_tensor_belongs", prog("  y = copy(f32[4])\n"), "2:12", "operand 'src' of 'copy' must be a tensor, not a tensor type"),
      P("integer_where_tensor_belongs", prog("  y = copy(M + 1)\n"), "2:14",
        "operand 'src' of 'copy' must be a tensor, not an integer expression"),
      P("bool_where_integer_belongs", prog("  broadcast(x, root=true)\n"), "2:21",
        "operand 'root' of 'broadcast' must be an integer expression, not a boolean"),
      P("name_where_type_belongs", prog("  t = allocate(x)\n"), "2:16", "operand 'type' of 'allocate' must be a tensor type"),
      P("integer_where_stream_belongs", prog("  synchronize(3)\n"), "2:15", "operand 's' of 'synchronize' must be a stream"),
      P("unknown_reduce_op", prog("  allreduce(x, op=foo)\n"), "2:19",
        "operand 'op' of 'allreduce' must be one of sum, prod, min, max, avg, not 'foo'"),
      P("result_on_op_without_one", prog("  h = wait(c)\n"), "2:3", "'wait' defines no value"),
      P("two_results", prog("  a, b = allocate(f32[4])\n"), "2:6", "'allocate' defines one value, but 2 names are given"),
      P("missing_required_result", prog("  allocate(f32[4])\n"), "2:3", "the result of 'allocate' must be bound to a name"),
      P("both_result_and_out", prog("  y = copy(x, out=z)\n"), "2:3", "'copy' writes into out=; it cannot also define 'y'"),
      P("neither_result_nor_out", prog("  copy(x)\n"), "2:3", "'copy' needs a result name or an out= operand"),
      P("unknown_operation", prog("  y = frobnicate(x)\n"), "2:7", "unknown operation 'frobnicate'"),
      P("statement_starts_with_number", prog("  4\n"), "2:3", "expected an operation or 'for', found '4'"),
      P("unknown_int_function", prog("  t = allocate(f32[foo(1)])\n"), "2:20", "'foo' is not an integer function"),
      P("int_function_arity", prog("  t = allocate(f32[ceildiv(1, 2, 3)])\n"), "2:20", "'ceildiv' takes 2 arguments, got 3"),
      P("int_binding_arity", prog("  n = min(1)\n"), "2:7", "'min' takes 2 arguments, got 1"),
      P("int_binding_without_name", prog("  max(1, 2)\n"), "2:3", "'max' computes one integer; bind it to exactly one name"),
      P("int_binding_keyword", prog("  n = min(a=1, 2)\n"), "2:11", "'min' takes no keyword operands"),
      P("int_binding_stream_operand", prog("  n = max(stream(0), 1)\n"), "2:11",
        "operand 'a' of 'max' must be an integer expression, not stream(...)"),
      P("unary_minus_on_name", prog("  t = allocate(f32[-M])\n"), "2:20", "'-' must be followed by an integer literal here"),
      P("dangling_operator", prog("  t = allocate(f32[M +])\n"), "2:23", "expected an expression, found ']'"),
      P("for_without_in", prog("  for i range(2) {\n  }\n"), "2:9", "expected 'in' after the loop index"),
      P("for_without_range", prog("  for i in (2) {\n  }\n"), "2:12", "expected 'range(...)' after 'in'"),
      P("for_without_brace", prog("  for i in range(2)\n  t = allocate(f32[4])\n"), "2:20",
        "expected '{' to open the loop body, found end of line"),
      withNote(P("unclosed_loop", "program p() {\n  for i in range(2) {\n", "3:1",
                 "expected '}' to close the loop body, found end of file"),
               "2:21", "to match this '{' (the loop body)"),
      // --- unclosed delimiters: the error where the parser gives up, a note at the opener
      withNote(P("unclosed_program_body_after_loop", "program p() {\n  for i in range(2) {\n  }\n", "4:1",
                 "expected '}' to close the program body, found end of file"),
               "1:13", "to match this '{' (the program body)"),
      withNote(P("unclosed_param_list", "program p(M = 1", "1:16", "expected ',' or ')' in the parameter list, found end of file"),
               "1:10", "to match this '(' (the parameter list)"),
      withNote(P("unclosed_operand_list_at_eof", "program p() {\n  t = allocate(f32[4], zero=true", "2:33",
                 "expected ',' or ')' in the operand list, found end of file"),
               "2:15", "to match this '(' (the operand list)"),
      withNote(P("unclosed_operand_list_empty", "program p() {\n  t = allocate(", "2:16",
                 "expected an expression, found end of file"),
               "2:15", "to match this '(' (the operand list)"),
      withNote(P("unclosed_dims_at_eof", "program p() {\n  t = allocate(f32[4, 8", "2:24",
                 "expected ',' or ']' in the dimensions, found end of file"),
               "2:19", "to match this '[' (the dimensions)"),
      withNote(P("unclosed_decl_dims", "program p() {\n  input x : f32[4\n}\n", "3:1",
                 "expected ',' or ']' in the dimensions, found '}'"),
               "2:16", "to match this '[' (the dimensions)"),
      withNote(P("unclosed_range", "program p() {\n  for i in range(4 {\n  }\n}\n", "2:20",
                 "expected ')' to close 'range', found '{'"),
               "2:17", "to match this '(' (the range)"),
      withNote(P("unclosed_shard", "program p() {\n  input x : f32[4] shard(0\n}\n", "3:1",
                 "expected ')' after the shard axis, found '}'"),
               "2:25", "to match this '(' (the shard axis)"),
      withNote(P("unclosed_stream_number", "program p() {\n  synchronize(stream(1)\n}\n", "3:1",
                 "expected ',' or ')' in the operand list, found '}'"),
               "2:14", "to match this '(' (the operand list)"),
      withNote(P("unclosed_stream_call", "program p() {\n  synchronize(stream(1 + 2", "2:27",
                 "expected ')' to close 'stream(', found end of file"),
               "2:21", "to match this '(' (the stream number)"),
      withNote(P("unclosed_parenthesis", prog("  t = allocate(f32[(M + 1])\n"), "2:26",
                 "expected ')' to close the parenthesis, found ']'"),
               "2:20", "to match this '(' (a parenthesized expression)"),
      withNote(P("unclosed_call", prog("  t = allocate(f32[min(M, 1])\n"), "2:28", "expected ',' or ')' in the call, found ']'"),
               "2:23", "to match this '(' (the call of 'min')"),
      withNote(P("unclosed_nested_loop_at_eof", "program p() {\n  for i in range(2) {\n    for j in range(2) {\n      e = record_event()\n",
                 "5:1", "expected '}' to close the loop body, found end of file"),
               "3:23", "to match this '{' (the loop body)"),
      // --- reserved names --------------------------------------------------
      P("reserved_rank_param", "program p(rank = 1) {\n}\n", "1:11", "'rank' is a reserved word and cannot be defined"),
      P("reserved_f32_result", prog("  f32 = allocate(f32[4])\n"), "2:3", "'f32' is a reserved word and cannot be defined"),
      P("reserved_for_input", prog("  input for : f32[4]\n"), "2:9", "'for' is a reserved word and cannot be defined"),
      P("reserved_world_index", prog("  for world in range(2) {\n  }\n"), "2:7", "'world' is a reserved word"),
      P("reserved_min_result", prog("  min = max(1, 2)\n"), "2:3", "'min' is a reserved word"),
      // --- structure -----------------------------------------------------
      V("unknown_name", prog("  y = copy(q)\n"), "2:12", "unknown name 'q'"),
      V("unknown_name_in_shape", prog("  t = allocate(f32[Q])\n"), "2:20", "unknown name 'Q'"),
      V("duplicate_definition", prog("  t = allocate(f32[4])\n  t = allocate(f32[4])\n"), "3:3", "'t' is already defined at 2:3"),
      V("duplicate_input", prog("  input x : f32[4]\n  x = allocate(f32[4])\n"), "3:3", "'x' is already defined at 2:9"),
      P("input_named_like_param", prog("  input M : f32[4]\n"), "2:9", "'M' is defined twice"),
      V("use_outside_loop", prog("  for i in range(2) {\n    t = allocate(f32[4])\n  }\n  deallocate(t)\n"), "5:14",
        "'t' is defined inside a loop at 3:5 and is not visible here"),
      V("index_outside_loop", prog("  for i in range(2) {\n  }\n  t = allocate(f32[i])\n"), "4:20",
        "'i' is defined inside a loop at 2:7 and is not visible here"),
      V("stream_value_where_tensor_belongs", prog("  s = get_current_stream()\n  deallocate(s)\n"), "3:14",
        "'s' is a stream, but operand 't' of 'deallocate' must be a tensor"),
      V("handle_where_tensor_belongs", prog("  input x : f32[4]\n  h = allreduce(x)\n  y = copy(h)\n"), "4:12",
        "'h' is a communication handle, but operand 'src' of 'copy' must be a tensor"),
      V("tensor_where_handle_belongs", prog("  input x : f32[4]\n  wait(x)\n"), "3:8",
        "'x' is a tensor, but operand 'h' of 'wait' must be a communication handle"),
      V("event_where_stream_belongs", prog("  e = record_event()\n  synchronize(e)\n"), "3:15",
        "'e' is an event, but operand 's' of 'synchronize' must be a stream"),
      V("integer_name_where_tensor_belongs", prog("  y = copy(M)\n"), "2:12", "'M' is an integer, but operand 'src' of 'copy'"),
      V("rank_where_tensor_belongs", prog("  y = copy(rank)\n"), "2:12", "'rank' is an integer, but operand 'src' of 'copy'"),
      V("tensor_in_integer_expression", prog("  input x : f32[4]\n  t = allocate(f32[x + 1])\n"), "3:20",
        "'x' is a tensor, not an integer"),
      V("tensor_in_loop_range", prog("  input x : f32[4]\n  for i in range(x) {\n  }\n"), "3:18", "'x' is a tensor, not an integer"),
      V("dtype_mismatch", prog("  input a : f32[4]\n  input b : f16[4]\n  c = add(a, b)\n"), "4:14",
        "dtype mismatch in 'add': 'a' is f32 but 'b' is f16"),
      V("dtype_mismatch_out", prog("  input a : f32[4]\n  o = allocate(bf16[4])\n  copy(a, out=o)\n"), "4:15",
        "dtype mismatch in 'copy': 'a' is f32 but 'o' is bf16"),
      V("output_never_defined", prog("  output y : f32[4]\n"), "2:10", "output 'y' is declared but the program never defines it"),
      V("output_used_before_definition", prog("  output y : f32[4]\n  input x : f32[4]\n  copy(x, out=y)\n  y = allocate(f32[4])\n"),
        "4:15", "output 'y' is used before the program defines it"),
      V("output_defined_in_loop", prog("  output y : f32[4]\n  for i in range(1) {\n    y = allocate(f32[4])\n  }\n"), "4:5",
        "output 'y' must be defined at the top level of the program, not in a loop"),
      V("output_wrong_dtype", prog("  output y : f32[4]\n  y = allocate(f16[4])\n"), "3:3", "output 'y' is declared f32 but defined as f16"),
      V("output_not_a_tensor", prog("  output y : f32[4]\n  y = get_current_stream()\n"), "3:3",
        "output 'y' must be a tensor, but 'get_current_stream' defines a stream"),
      V("output_bound_to_integer", prog("  output y : f32[4]\n  y = min(1, 2)\n"), "3:3",
        "output 'y' must be a tensor, but 'min' defines an integer"),
      V("deallocate_input", prog("  input x : f32[4]\n  deallocate(x)\n"), "3:14",
        "'x' is the program input; only tensors the program allocates can be deallocated"),
      V("deallocate_view", prog("  t = allocate(f32[4])\n  v = shard_by_stream(t, axis=0, index=0, chunks=2)\n  deallocate(v)\n"),
        "4:14", "'v' is a view; only tensors the program allocates can be deallocated"),
      V("deallocate_output", prog("  output y : f32[4]\n  y = allocate(f32[4])\n  deallocate(y)\n"), "4:14",
        "'y' is the program output"),
      V("shadow_in_loop", prog("  t = allocate(f32[4])\n  for i in range(2) {\n    t = allocate(f32[4])\n  }\n"), "4:5",
        "'t' is already defined at 2:3"),
      // --- bound checks --------------------------------------------------
      V("linear_shape_mismatch", prog("  input x : f32[4, 8]\n  input w : f32[3, 6]\n  y = linear(x, w)\n"), "4:17",
        "'linear' contracts K: x is [4, 8] but w is [3, 6] (w must be [N, 8])"),
      V("linear_bias_mismatch", prog("  input x : f32[4, 8]\n  input w : f32[3, 8]\n  input b : f32[4]\n  y = linear(x, w, b)\n"),
        "5:20", "'b' has shape [4], but the bias of 'linear' needs [3]"),
      V("linear_out_mismatch", prog("  input x : f32[4, 8]\n  input w : f32[3, 8]\n  o = allocate(f32[4, 8])\n  linear(x, w, out=o)\n"),
        "5:20", "'o' has shape [4, 8], but the result of 'linear' needs [4, 3]"),
      V("matmul_shape_mismatch", prog("  input a : f32[4, 8]\n  input b : f32[6, 3]\n  c = matmul(a, b)\n"), "4:17",
        "'matmul' contracts K: a is [4, 8] but b is [6, 3]"),
      V("matmul_rank", prog("  input a : f32[4]\n  input b : f32[4, 3]\n  c = matmul(a, b)\n"), "4:14",
        "'matmul' needs a of shape [M, K], got [4]"),
      V("add_shape_mismatch", prog("  input a : f32[4]\n  input b : f32[5]\n  c = add(a, b)\n"), "4:14",
        "'b' has shape [5], but 'add' (no broadcasting) needs [4]"),
      V("shard_not_dividing", prog("  input x : f32[4, 8] shard(0)\n"), "2:23",
        "extent 4 of axis 0 of 'x' does not divide evenly over 3 ranks", 3),
      V("output_shard_not_dividing", prog("  output y : f32[M] shard(0)\n  y = allocate(f32[1])\n"), "2:21",
        "extent 4 of axis 0 of 'y' does not divide evenly over 3 ranks", 3),
      V("reduce_scatter_not_dividing", prog("  input x : f32[4]\n  o = allocate(f32[1])\n  reduce_scatter(x, out=o)\n"), "4:18",
        "'reduce_scatter' splits axis 0 of extent 4 over 3 ranks: it must divide evenly", 3),
      V("reduce_scatter_out_shape", prog("  input x : f32[4]\n  o = allocate(f32[4])\n  reduce_scatter(x, out=o)\n"), "4:25",
        "'o' has shape [4], but 'reduce_scatter' over 2 ranks needs [2]", 2),
      V("allgather_out_shape", prog("  input x : f32[4]\n  o = allocate(f32[4])\n  allgather(x, out=o)\n"), "4:20",
        "'o' has shape [4], but 'allgather' over 2 ranks needs [8]", 2),
      V("allreduce_out_shape", prog("  input x : f32[4]\n  o = allocate(f32[2])\n  allreduce(x, out=o)\n"), "4:20",
        "'o' has shape [2], but the result of 'allreduce' needs [4]"),
      V("shard_index_out_of_range", prog("  input x : f32[8]\n  for i in range(5) {\n    v = shard_by_stream(x, axis=0, index=i, chunks=4)\n  }\n"),
        "4:42", "index 4 is out of range for 4 chunks"),
      V("shard_by_stream_axis_out_of_range", prog("  input x : f32[8, 2]\n  v = shard_by_stream(x, axis=2, index=0, chunks=4)\n"), "3:31",
        "axis 2 is out of range for a tensor of rank 2"),
      V("shard_negative_axis", prog("  input x : f32[8, 2]\n  v = shard_by_stream(x, axis=-1, index=0, chunks=4)\n"), "3:31",
        "axis -1 is out of range for a tensor of rank 2"),
      V("allgather_axis_out_of_range", prog("  input x : f32[4]\n  o = allocate(f32[8])\n  allgather(x, out=o, axis=1)\n"), "4:28",
        "axis 1 is out of range for a tensor of rank 1", 2),
      V("zero_chunks", prog("  input x : f32[8]\n  v = shard_by_stream(x, axis=0, index=0, chunks=0)\n"), "3:50",
        "chunks must be at least 1, got 0"),
      V("negative_extent", prog("  t = allocate(f32[M - 8])\n"), "2:22", "negative extent -4"),
      V("negative_extent_from_set", prog("  t = allocate(f32[M])\n"), "2:20", "negative extent -4", 1, {{"M", -4}}),
      V("division_by_zero", prog("  t = allocate(f32[M / (N - N)])\n"), "2:22", "division by zero in 4 / 0"),
      V("modulo_by_zero", prog("  for i in range(M % 0) {\n  }\n"), "2:20", "division by zero in 4 % 0"),
      V("ceildiv_negative", prog("  n = ceildiv(M - 8, 2)\n"), "2:7", "ceildiv(-4, 2) needs non-negative operands"),
      V("multiplication_overflow", prog("  t = allocate(f32[M * M])\n"), "2:22", "integer overflow in 4294967296 * 4294967296", 1,
        {{"M", int64_t{1} << 32}}),
      V("addition_overflow", prog("  t = allocate(f32[9223372036854775807 + 1])\n"), "2:40", "integer overflow in"),
      V("element_count_overflow", prog("  t = allocate(f32[M, M])\n"), "2:16",
        "f32[4294967296, 4294967296] needs more than 8 EiB; a tensor's byte size must fit in 63 bits", 1,
        {{"M", int64_t{1} << 32}}),
      // --- byte sizes: the element count fits, the bytes do not ------------
      V("byte_size_wraps_to_one_element", prog("  input x : f32[4611686018427387905]\n"), "2:13",
        "f32[4611686018427387905] needs more than 8 EiB; a tensor's byte size must fit in 63 bits"),
      V("byte_size_of_output", prog("  output y : f64[M, 1152921504606846976]\n  y = allocate(f64[M, 1])\n"), "2:14",
        "f64[4, 1152921504606846976] needs more than 8 EiB"),
      V("byte_size_of_sharded_input", prog("  input x : bf16[9223372036854775806] shard(0)\n"), "2:13",
        "bf16[9223372036854775806] needs more than 8 EiB", 2),
      V("byte_size_of_allocate_from_params", prog("  t = allocate(f16[M, N])\n"), "2:16",
        "f16[4611686018427387904, 1] needs more than 8 EiB", 1, {{"M", int64_t{1} << 62}, {"N", 1}}),
      V("byte_size_of_empty_tensor", prog("  t = allocate(f32[0, 4611686018427387904, 4])\n"), "2:16",
        "f32[0, 4611686018427387904, 4] is empty, but its non-zero extents span more than 8 EiB"),
      V("byte_size_of_matmul_result", prog("  input a : f32[M, 1]\n  input b : f32[1, M]\n  c = matmul(a, b)\n"), "4:7",
        "the result of 'matmul', f32[2147483648, 2147483648], needs more than 8 EiB", 1, {{"M", int64_t{1} << 31}}),
      V("byte_size_of_linear_result", prog("  input x : f32[M, 1]\n  input w : f32[M, 1]\n  y = linear(x, w)\n"), "4:7",
        "the result of 'linear', f32[2147483648, 2147483648], needs more than 8 EiB", 1, {{"M", int64_t{1} << 31}}),
      V("byte_size_of_batched_linear_result", prog("  input x : f64[M, M, 1]\n  input w : f64[M, 1]\n  y = linear(x, w)\n"),
        "4:7", "the result of 'linear', f64[2097152, 2097152, 2097152], needs more than 8 EiB", 1,
        {{"M", int64_t{1} << 21}}),
      V("gathered_extent_overflow", prog("  input x : f16[4611686018427387903]\n  h = allgather(x, out=x)\n"), "3:7",
        "'allgather' over 3 ranks: the gathered extent of axis 0, 4611686018427387903 x 3, does not fit in 64 bits", 3),
      V("tensor_rank_over_eight", prog("  t = allocate(f32[1, 1, 1, 1, 1, 1, 1, 1, 1])\n"), "2:16",
        "this tensor type has 9 dimensions; tensors have at most 8"),
      V("input_rank_over_eight", prog("  input x : f32[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"), "2:13",
        "this tensor type has 12 dimensions; tensors have at most 8"),
      V("broadcast_root_out_of_range", prog("  input x : f32[4]\n  broadcast(x, root=world)\n"), "3:21",
        "root 2 is not a rank of a team of 2", 2),
      V("broadcast_root_from_index", prog("  input x : f32[4]\n  for i in range(3) {\n    broadcast(x, root=i)\n  }\n"), "4:23",
        "root 2 is not a rank of a team of 2", 2),
      V("negative_stream_number", prog("  set_current_stream(stream(-1))\n"), "2:29", "stream number -1 is negative"),
      V("negative_stream_expression", prog("  synchronize(stream(rank - 1))\n"), "2:27", "stream number -1 is negative"),
      V("use_after_deallocate", prog("  t = allocate(f32[4])\n  deallocate(t)\n  u = copy(t)\n"), "4:12",
        "'t' is used after 't' was deallocated at 3:3"),
      V("view_after_deallocate",
        prog("  t = allocate(f32[4])\n  v = shard_by_stream(t, axis=0, index=0, chunks=2)\n  deallocate(t)\n  u = copy(v)\n"), "5:12",
        "'v' is used after 't' was deallocated at 4:3"),
      V("double_deallocate", prog("  t = allocate(f32[4])\n  deallocate(t)\n  deallocate(t)\n"), "4:14",
        "'t' is used after 't' was deallocated at 3:3"),
      V("output_shape_differs", prog("  output y : f32[M]\n  y = allocate(f32[5])\n"), "2:10",
        "output 'y' is declared with rank-local shape [4] but the program defines it as [5]"),
      V("output_shape_differs_on_rank_1", prog("  output y : f32[M]\n  y = allocate(f32[M + rank])\n"), "2:10",
        "output 'y' is declared with rank-local shape [4] but the program defines it as [5]", 2),
      V("loop_too_large", prog("  for i in range(1000000000000) {\n    t = allocate(f32[4])\n  }\n"), "2:3", "too large to verify"),
      V("empty_loop_too_large", prog("  for i in range(1000000000000) {\n  }\n"), "2:3", "too large to verify"),
      V("unknown_set_param", prog("  t = allocate(f32[M])\n"), "", "program 'p' has no parameter 'Q' (its parameters: M, N)", 1,
        {{"Q", 3}}),
      V("world_zero", prog("  t = allocate(f32[M])\n"), "", "a team needs at least one rank, got 0", 0),
  };
}

// The one diagnostic the case produces, checking that it comes from the expected stage.
std::optional<Diagnostic> diagnose(const ErrorCase& c) {
  auto parsed = parseProgram(c.source);
  if (c.stage == Stage::Parse) {
    EXPECT_FALSE(parsed.ok()) << "expected a parse error";
    if (parsed.ok()) return std::nullopt;
    return parsed.error();
  }
  if (!parsed.ok()) {
    ADD_FAILURE() << "unexpected parse error: " << renderDiagnostic(parsed.error(), "t.hir", c.source);
    return std::nullopt;
  }
  Status status = verifyProgram(*parsed, Bindings{c.params, c.world});
  EXPECT_TRUE(status.has_value()) << "expected a verifier error";
  return status;
}

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class ParserErrorsTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParserErrorsTest, ReportsPositionAndMessage) {
  const ErrorCase& c = GetParam();
  auto diag = diagnose(c);
  ASSERT_TRUE(diag.has_value());
  std::string rendered = renderDiagnostic(*diag, "t.hir", c.source);
  std::string prefix = c.where.empty() ? "t.hir: error: " : "t.hir:" + c.where + ": error: ";
  EXPECT_EQ(rendered.substr(0, prefix.size()), prefix) << rendered;
  EXPECT_NE(diag->message.find(c.message), std::string::npos) << "message: " << diag->message;
  // One line of message: no stray newlines inside it.
  EXPECT_EQ(diag->message.find('\n'), std::string::npos);
  if (c.noteWhere.empty()) {
    EXPECT_TRUE(diag->notes.empty()) << rendered;
  } else {
    ASSERT_EQ(diag->notes.size(), 1u) << rendered;
    EXPECT_NE(rendered.find("\nt.hir:" + c.noteWhere + ": note: " + c.noteMessage + "\n"), std::string::npos)
        << rendered;
  }
}

// The line of `source` numbered `line` (1-based).
std::string lineOf(const std::string& source, uint32_t line) {
  size_t begin = 0;
  for (uint32_t l = 1; l < line; ++l) begin = source.find('\n', begin) + 1;
  size_t end = source.find('\n', begin);
  return source.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

TEST_P(ParserErrorsTest, RendersSourceLineAndCaret) {
  const ErrorCase& c = GetParam();
  auto diag = diagnose(c);
  ASSERT_TRUE(diag.has_value());
  std::string rendered = renderDiagnostic(*diag, "t.hir", c.source);
  std::vector<std::string> lines;
  for (size_t begin = 0; begin < rendered.size();) {
    size_t end = rendered.find('\n', begin);
    ASSERT_NE(end, std::string::npos) << "every rendered line ends with a newline";
    lines.push_back(rendered.substr(begin, end - begin));
    begin = end + 1;
  }
  if (!diag->loc.valid() || c.source.empty()) {
    EXPECT_EQ(lines.size(), 1u) << rendered;
    return;
  }
  // The error and each note: a header, the source line and a caret.
  ASSERT_EQ(lines.size(), 3u * (1 + diag->notes.size())) << rendered;
  std::string source = lineOf(c.source, diag->loc.line);
  const std::string& shown = lines[1];
  const std::string& caret = lines[2];
  ASSERT_FALSE(caret.empty());
  EXPECT_EQ(caret.back(), '^');
  EXPECT_EQ(caret.find_first_not_of(" \t"), caret.size() - 1) << "only spacing before the caret";
  size_t caretCol = caret.size() - 1;
  size_t col = diag->loc.col - 1;
  ASSERT_LE(col, source.size()) << "column beyond the end of its line";
  if (source.size() <= 200) {
    std::string printable;
    for (unsigned char ch : source) printable += (ch == '\t' || (ch >= 0x20 && ch < 0x7f)) ? char(ch) : '?';
    EXPECT_EQ(shown, printable);
    EXPECT_EQ(caretCol, col);
  } else {
    // A long line is shown as a window around the column.
    EXPECT_LE(shown.size(), 200u);
    EXPECT_NE(source.find(shown), std::string::npos);
    ASSERT_LT(caretCol, shown.size());
    EXPECT_EQ(shown[caretCol], source[col]);
  }
  if (col < source.size()) {
    unsigned char at = static_cast<unsigned char>(source[col]);
    EXPECT_FALSE(at == ' ' || at == '\t') << "the caret points at spacing, not a token";
  }
}

INSTANTIATE_TEST_SUITE_P(ParserErrors, ParserErrorsTest, ::testing::ValuesIn(errorCases()),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

TEST(ParserErrorsTable, HasManyDistinctCases) {
  auto cases = errorCases();
  EXPECT_GE(cases.size(), 35u);
  std::set<std::string> names, sources;
  for (const ErrorCase& c : cases) {
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case name " << c.name;
    std::string key = c.source + "|" + std::to_string(c.world);
    for (const auto& [name, value] : c.params) key += "|" + name + "=" + std::to_string(value);
    EXPECT_TRUE(sources.insert(key).second) << "duplicate case " << c.name;
  }
}

TEST(ParserErrorsRender, CaretFollowsTabs) {
  std::string text = "program p() {\n\tt = allocate(f32[4@])\n}\n";
  auto parsed = parseProgram(text);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().loc, (SourceLoc{2, 20}));
  EXPECT_EQ(renderDiagnostic(parsed.error(), "t.hir", text),
            "t.hir:2:20: error: unexpected character '@'\n"
            "\tt = allocate(f32[4@])\n"
            "\t                  ^\n");
}

TEST(ParserErrorsRender, WithoutSourceOnlyTheHeader) {
  Diagnostic diag{{3, 7}, "boom"};
  EXPECT_EQ(renderDiagnostic(diag, "f.hir"), "f.hir:3:7: error: boom\n");
  EXPECT_EQ(renderDiagnostic(Diagnostic{{}, "no place"}, "f.hir", "x\n"), "f.hir: error: no place\n");
}

TEST(ParserErrorsRender, CaretAtEndOfFile) {
  std::string text = "program p() {\n  t = allocate(f32[4])";
  auto parsed = parseProgram(text);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().loc, (SourceLoc{2, 23}));
  EXPECT_EQ(renderDiagnostic(parsed.error(), "t.hir", text),
            "t.hir:2:23: error: expected '}' to close the program body, found end of file\n"
            "  t = allocate(f32[4])\n"
            "                      ^\n"
            "t.hir:1:13: note: to match this '{' (the program body)\n"
            "program p() {\n"
            "            ^\n");
}

TEST(ParserErrorsRender, OnlyTheInnermostUnclosedDelimiterGetsANote) {
  // Three delimiters are open at the end of the file; the note names the one the parser was inside.
  std::string text = "program p() {\n  for i in range(2) {\n    t = allocate(f32[4, (1 + ";
  auto parsed = parseProgram(text);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(renderDiagnostic(parsed.error(), "t.hir", text),
            "t.hir:3:30: error: expected an expression, found end of file\n"
            "    t = allocate(f32[4, (1 + \n"
            "                             ^\n"
            "t.hir:3:25: note: to match this '(' (a parenthesized expression)\n"
            "    t = allocate(f32[4, (1 + \n"
            "                        ^\n");
  // An error that is not about a missing delimiter, away from the end of the file, gets none.
  auto other = parseProgram("program p() {\n  t = allocate(f32[4], fill=1)\n}\n");
  ASSERT_FALSE(other.ok());
  EXPECT_TRUE(other.error().notes.empty());
}

TEST(ParserErrorsRender, CrLfLineEndings) {
  std::string text = "program p() {\r\n  t = allocate(f32[4@])\r\n}\r\n";
  auto parsed = parseProgram(text);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().loc, (SourceLoc{2, 21}));
  std::string rendered = renderDiagnostic(parsed.error(), "t.hir", text);
  EXPECT_EQ(rendered,
            "t.hir:2:21: error: unexpected character '@'\n"
            "  t = allocate(f32[4@])\n"
            "                    ^\n");
}

TEST(ParserErrorsLimits, HugeLoopFailsQuickly) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"  for i in range(1000000000000) {\n    t = allocate(f32[4])\n  }\n", "2:3"},
      {"  for i in range(1000000000000) {\n  }\n", "2:3"},
      {"  for i in range(5, 1000000000000) {\n    for j in range(1000000000000) {\n    }\n  }\n", "2:3"},
      // Each loop alone fits the budget; together they run 10^12 empty iterations.
      {"  for i in range(1000000) {\n    for j in range(1000000) {\n    }\n  }\n", "3:5"},
  };
  for (const auto& [body, where] : cases) {
    std::string text = prog(body);
    auto parsed = parseProgram(text);
    ASSERT_TRUE(parsed.ok()) << renderDiagnostic(parsed.error(), "t.hir", text);
    auto start = std::chrono::steady_clock::now();
    Status status = verifyProgram(*parsed, Bindings{{}, 4});
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(status.has_value()) << text;
    std::string rendered = renderDiagnostic(*status, "t.hir", text);
    EXPECT_EQ(rendered.rfind("t.hir:" + where + ": error: ", 0), 0u) << rendered;
    EXPECT_NE(status->message.find("too large to verify"), std::string::npos) << status->message;
    EXPECT_LT(seconds, 5.0) << "verifying an unverifiable loop took too long:\n" << text;
  }
}

TEST(ParserErrorsLimits, LoopJustUnderTheLimitVerifies) {
  // 1000 x 1000 iterations of one statement: a million statement instances.
  std::string text = prog("  for i in range(1000) {\n    for j in range(1000) {\n      e = record_event()\n    }\n  }\n");
  auto parsed = parseProgram(text);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(verifyProgram(*parsed, Bindings{}), std::nullopt);
}

TEST(ParserErrorsLimits, NestingAtTheLimitParsesAndVerifies) {
  for (const std::string& text : {deepParens(kMaxExprLevels), deepLoops(kMaxLoopNesting)}) {
    auto parsed = parseProgram(text);
    ASSERT_TRUE(parsed.ok()) << renderDiagnostic(parsed.error(), "t.hir", text);
    EXPECT_EQ(verifyProgram(*parsed), std::nullopt);
    auto again = parseProgram(printProgram(*parsed));
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, *parsed);
  }
  EXPECT_FALSE(parseProgram(deepParens(kMaxExprLevels + 1)).ok());
  EXPECT_FALSE(parseProgram(deepLoops(kMaxLoopNesting + 1)).ok());
}

// `terms` copies of `term` joined by `op`, left-leaning (`1 + 1 + 1`) or, with
// parentheses, right-leaning (`1 + (1 + (1))`).
std::string chain(const std::string& term, const std::string& op, int terms, bool rightLeaning) {
  std::string text;
  text.reserve(static_cast<size_t>(terms) * (term.size() + op.size() + 4));
  for (int k = 0; k < terms; ++k) {
    if (k) text += " " + op + " " + (rightLeaning ? "(" : "");
    text += term;
  }
  if (rightLeaning) text += std::string(static_cast<size_t>(terms - 1), ')');
  return text;
}

// Where in a program an integer expression may stand; `{}` marks the spot.
struct ExprPosition {
  std::string name;
  std::string body;  // a program body with one "{}"
};

const std::vector<ExprPosition>& exprPositions() {
  static const std::vector<ExprPosition> positions = {
      {"decl_dim", "  input x : f32[4, {}]\n"},
      {"allocate_dim", "  t = allocate(f32[{}])\n"},
      {"loop_end", "  for i in range({}) {\n  }\n"},
      {"loop_start", "  for i in range({}, 4) {\n  }\n"},
      {"int_operand", "  input x : f32[4]\n  v = shard_by_stream(x, axis=0, index={}, chunks=2)\n"},
      {"broadcast_root", "  input x : f32[4]\n  h = broadcast(x, root={})\n"},
      {"stream_number", "  set_current_stream(stream({}))\n"},
      {"int_binding", "  n = max({}, 1)\n"},
      {"call_argument", "  t = allocate(f32[ceildiv(1, {})])\n"},
      {"parenthesized", "  t = allocate(f32[2 * ({})])\n"},
  };
  return positions;
}

std::string placed(const ExprPosition& position, const std::string& expr) {
  std::string body = position.body;
  body.replace(body.find("{}"), 2, expr);
  return prog(body);
}

// 1-based column of the `n`th occurrence of `needle` in `line`, searching from `from` (0-based).
uint32_t columnOf(const std::string& line, size_t from, const std::string& needle, int n) {
  size_t at = from;
  for (int k = 0; k < n; ++k) {
    at = line.find(needle, k == 0 ? at : at + 1);
    if (at == std::string::npos) return 0;
  }
  return static_cast<uint32_t>(at + 1);
}

TEST(ParserErrorsLimits, LongOperatorChainsAreRefusedEverywhere) {
  // 60,000 terms, every operator, left- and right-leaning, in every place an
  // expression may stand: one positioned error, never a stack overflow.
  int cases = 0;
  for (std::string op : {"+", "-", "*", "/", "%"}) {
    for (bool right : {false, true}) {
      std::string expr = chain("1", op, 60000, right);
      for (const ExprPosition& position : exprPositions()) {
        SCOPED_TRACE(op + (right ? " right-leaning in " : " left-leaning in ") + position.name);
        std::string text = placed(position, expr);
        auto parsed = parseProgram(text);
        ASSERT_FALSE(parsed.ok());
        const Diagnostic& d = parsed.error();
        EXPECT_EQ(d.message, "expression nested too deeply: more than 256 levels of operators, parentheses and calls");
        size_t spot = position.body.find("{}");
        size_t newline = position.body.find('\n');
        uint32_t line = newline < spot ? 3 : 2;
        size_t column0 = newline < spot ? spot - newline - 1 : spot;  // where the chain starts on its line
        // Parentheses and calls around the chain count too.
        int outer = position.name == "call_argument" || position.name == "parenthesized" ? 1 : 0;
        std::string text2 = lineOf(text, line);
        // Left-leaning: the operator that makes the 257th level. Right-leaning:
        // the parenthesis that opens it.
        uint32_t want = right ? columnOf(text2, column0, op + " (", kMaxExprLevels + 1 - outer) + 2
                              : columnOf(text2, column0, " " + op + " ", kMaxExprLevels + 1 - outer) + 1;
        EXPECT_EQ(d.loc.line, line);
        EXPECT_EQ(d.loc.col, want) << renderDiagnostic(d, "t.hir", text).substr(0, 600);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 5 * 2 * 10);
}

TEST(ParserErrorsLimits, ChainsAtTheLimitParseVerifyAndRoundTrip) {
  // 256 levels is allowed wherever the expression stands; `+ 0` or `* 1` keeps the value.
  for (const ExprPosition& position : exprPositions()) {
    int outer = position.name == "call_argument" || position.name == "parenthesized" ? 1 : 0;
    for (const auto& [op, term] : std::vector<std::pair<std::string, std::string>>{{"+", "0"}, {"*", "1"}}) {
      for (bool right : {false, true}) {
        SCOPED_TRACE(op + (right ? " right-leaning in " : " left-leaning in ") + position.name);
        std::string expr = "1 " + op + " " + (right ? "(" : "") + chain(term, op, kMaxExprLevels - outer, right) +
                           (right ? ")" : "");
        std::string text = placed(position, expr);
        auto parsed = parseProgram(text);
        ASSERT_TRUE(parsed.ok()) << renderDiagnostic(parsed.error(), "t.hir", text).substr(0, 600);
        EXPECT_EQ(verifyProgram(*parsed, Bindings{{}, 2}), std::nullopt);
        std::string printed = printProgram(*parsed);
        auto again = parseProgram(printed);
        ASSERT_TRUE(again.ok()) << again.error().message;
        EXPECT_EQ(*again, *parsed);
        // One more level is one too many.
        std::string over = "1 " + op + " " + expr;
        EXPECT_FALSE(parseProgram(placed(position, right ? "1 " + op + " (" + expr + ")" : over)).ok());
      }
    }
  }
}

TEST(ParserErrorsLimits, DeepCallsAndParenthesesInEveryPosition) {
  std::string calls, closing;
  for (int k = 0; k < 60000; ++k) {
    calls += "min(1, ";
    closing += ")";
  }
  std::string parens = std::string(60000, '(') + "1" + std::string(60000, ')');
  for (const ExprPosition& position : exprPositions()) {
    for (const std::string& expr : {calls + "1" + closing, parens}) {
      SCOPED_TRACE(position.name + ": " + expr.substr(0, 10));
      auto parsed = parseProgram(placed(position, expr));
      ASSERT_FALSE(parsed.ok());
      EXPECT_EQ(parsed.error().message,
                "expression nested too deeply: more than 256 levels of operators, parentheses and calls");
    }
  }
}

TEST(ParserErrorsLimits, ManyStatementsNeedNoRecursion) {
  // Statement lists are iterated everywhere: 200,000 statements, at the top
  // level and in a loop, parse, verify and round-trip.
  for (bool inLoop : {false, true}) {
    std::string body = inLoop ? "  for i in range(1) {\n" : "";
    for (int k = 0; k < 200000; ++k) body += "    e" + std::to_string(k) + " = record_event()\n";
    if (inLoop) body += "  }\n";
    std::string text = prog(body);
    auto parsed = parseProgram(text);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ(verifyProgram(*parsed), std::nullopt);
    auto again = parseProgram(printProgram(*parsed));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *parsed);
  }
}

TEST(ParserErrorsLimits, LongParameterAndDeclarationListsParseInLinearTime) {
  // 200,000 params or declarations: a quadratic duplicate check would take minutes.
  std::string params, decls;
  for (int k = 0; k < 200000; ++k) {
    params += (k ? ", p" : "p") + std::to_string(k) + " = 1";
    decls += "  input x" + std::to_string(k) + " : f32[1]\n";
  }
  for (const std::string& text : {"program p(" + params + ") {\n}\n", "program p() {\n" + decls + "}\n"}) {
    auto start = std::chrono::steady_clock::now();
    auto parsed = parseProgram(text);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_LT(seconds, 10.0);
  }
  auto duplicate = parseProgram("program p(" + params + ", p7 = 2) {\n}\n");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.error().message, "parameter 'p7' is defined twice");
}

// ---------------------------------------------------------------------------
// Robustness: arbitrary input never crashes and errors carry valid positions.

uint32_t lineCount(const std::string& text) {
  uint32_t lines = 1;
  for (char ch : text) lines += ch == '\n';
  return lines;
}

// Parses, and verifies what parses; every diagnostic must point inside the text.
void checkNoCrash(const std::string& text, int& parsedCount) {
  auto parsed = parseProgram(text);
  if (!parsed.ok()) {
    const Diagnostic& d = parsed.error();
    ASSERT_GE(d.loc.line, 1u) << d.message;
    ASSERT_GE(d.loc.col, 1u) << d.message;
    ASSERT_LE(d.loc.line, lineCount(text)) << d.message;
    ASSERT_FALSE(d.message.empty());
    std::string rendered = renderDiagnostic(d, "t.hir", text);
    ASSERT_EQ(rendered.rfind("t.hir:" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": error: ", 0), 0u);
    return;
  }
  ++parsedCount;
  // What parses prints to text that parses back to the same program.
  std::string printed = printProgram(*parsed);
  auto reparsed = parseProgram(printed);
  ASSERT_TRUE(reparsed.ok()) << renderDiagnostic(reparsed.error(), "printed.hir", printed);
  ASSERT_TRUE(*reparsed == *parsed) << printed;
  for (int64_t world : {1, 3}) {
    Status status = verifyProgram(*parsed, Bindings{{}, world});
    if (status) {
      ASSERT_TRUE(status->loc.valid()) << status->message << "\n" << text;
      ASSERT_LE(status->loc.line, lineCount(text));
      ASSERT_FALSE(status->message.empty());
    }
  }
}

TEST(ParserErrorsRobustness, RandomBytes) {
  std::mt19937 rng(12345);
  int parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text(rng() % 200, '\0');
    bool printableOnly = iter % 2 == 0;
    for (char& ch : text) ch = static_cast<char>(printableOnly ? 0x20 + rng() % 0x5f : rng() % 256);
    if (iter % 3 == 0) text = "program p(M = 4) {\n" + text;
    ASSERT_NO_FATAL_FAILURE(checkNoCrash(text, parsed)) << "iteration " << iter;
  }
  EXPECT_EQ(parsed, 0) << "random bytes should not form programs";
}

const std::vector<std::string>& tokenPool() {
  static const std::vector<std::string> pool = {
      "program", "p", "(", ")", "{", "}", "[", "]", ",", ":", ";", "=", "+", "-", "*", "/", "%", "\n", "\n",
      "input", "output", "x", "y", "t", "h", "s", "e", "i", "j", "f32", "f16", "bf16", "f64", "shard", "for", "in",
      "range", "stream", "true", "false", "allocate", "deallocate", "shard_by_stream", "linear", "matmul", "copy",
      "add", "allreduce", "allgather", "reduce_scatter", "broadcast", "wait", "get_current_stream",
      "set_current_stream", "synchronize", "record_event", "wait_event", "ceildiv", "min", "max", "axis", "index",
      "chunks", "out", "op", "root", "zero", "sum", "avg", "foo", "rank", "world", "M", "0", "1", "2", "4",
      "# comment\n", "9223372036854775808", "99999999999999999999"};
  return pool;
}

TEST(ParserErrorsRobustness, RandomTokenSoup) {
  std::mt19937 rng(777);
  const auto& pool = tokenPool();
  int parsed = 0;
  for (int iter = 0; iter < 5000; ++iter) {
    std::string text = iter % 2 ? "program p(M = 4) {\n" : "";
    size_t count = rng() % 60;
    for (size_t k = 0; k < count; ++k) {
      text += pool[rng() % pool.size()];
      text += rng() % 4 ? " " : "";
    }
    if (iter % 4 == 1) text += "\n}\n";
    ASSERT_NO_FATAL_FAILURE(checkNoCrash(text, parsed)) << "iteration " << iter << ":\n" << text;
  }
}

// Valid programs with a few tokens deleted, duplicated or replaced: closer to
// real mistakes, and some of them still parse and reach the verifier.
TEST(ParserErrorsRobustness, MutatedPrograms) {
  const std::vector<std::string> seeds = {
      "program row_parallel_linear(M = 24, K = 12, N = 8, S = 4) {\n"
      "  input  x : f32[M, K] shard(1)\n"
      "  input  w : f32[N, K] shard(1)\n"
      "  output y : f32[M, N]\n"
      "  y = allocate(f32[M, N], zero=true)\n"
      "  main = get_current_stream()\n"
      "  for i in range(S) {\n"
      "    set_current_stream(stream(i))\n"
      "    synchronize(main)\n"
      "    xi = shard_by_stream(x, axis=0, index=i, chunks=S)\n"
      "    yi = shard_by_stream(y, axis=0, index=i, chunks=S)\n"
      "    linear(xi, w, out=yi)\n"
      "    c = allreduce(yi, op=sum)\n"
      "    wait(c)\n"
      "  }\n"
      "  set_current_stream(main)\n"
      "  for j in range(S) {\n"
      "    synchronize(stream(j))\n"
      "  }\n"
      "}\n",
      "program misc(M = 12, N = 6) {\n"
      "  input a : f32[M, N]\n"
      "  input b : f32[N, M]\n"
      "  output c : f32[M, M]\n"
      "  c = matmul(a, b)\n"
      "  n = ceildiv(M, 5); lo = min(M, N); hi = max(n, lo)\n"
      "  t = allocate(f32[hi * world, N])\n"
      "  g = allocate(f32[hi, N])\n"
      "  h = allgather(g, out=t, axis=0)\n"
      "  wait(h)\n"
      "  r = allocate(f32[M / world])\n"
      "  u = allocate(f32[M])\n"
      "  reduce_scatter(u, out=r, op=max)\n"
      "  ev = record_event()\n"
      "  for k in range(1, 3) {\n"
      "    broadcast(u, root=k % world)\n"
      "    wait_event(ev)\n"
      "  }\n"
      "  v = add(u, u)\n"
      "  copy(v, out=u)\n"
      "  deallocate(v)\n"
      "}\n",
  };
  std::mt19937 rng(4242);
  const auto& pool = tokenPool();
  int parsed = 0;
  for (const std::string& seed : seeds) {
    auto tokens = tokenize(seed);
    ASSERT_TRUE(tokens.ok());
    std::vector<std::string> words;
    for (const Token& t : *tokens)
      if (t.kind != TokenKind::Eof) words.emplace_back(t.text);
    int seedParsed = 0;
    checkNoCrash(seed, seedParsed);
    ASSERT_EQ(seedParsed, 1) << "the seed program must parse";
    for (int iter = 0; iter < 3000; ++iter) {
      std::vector<std::string> mutated = words;
      int mutations = 1 + static_cast<int>(rng() % 3);
      for (int m = 0; m < mutations && !mutated.empty(); ++m) {
        size_t at = rng() % mutated.size();
        switch (rng() % 3) {
          case 0: mutated.erase(mutated.begin() + static_cast<std::ptrdiff_t>(at)); break;
          case 1: mutated.insert(mutated.begin() + static_cast<std::ptrdiff_t>(at), mutated[at]); break;
          default: mutated[at] = pool[rng() % pool.size()]; break;
        }
      }
      std::string text;
      for (const std::string& w : mutated) text += w == "\n" ? w : w + " ";
      ASSERT_NO_FATAL_FAILURE(checkNoCrash(text, parsed)) << "iteration " << iter << ":\n" << text;
    }
  }
  EXPECT_GT(parsed, 50) << "some mutants should still parse and reach the verifier";
}

}  // namespace
