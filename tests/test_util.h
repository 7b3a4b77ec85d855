// Helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/parser.h"
#include "ir/printer.h"
#include "test_files.h"

namespace hostir::testing {

// Every `.hir` file directly inside `dir`, sorted.
inline std::vector<std::filesystem::path> hirFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".hir") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Parses or fails the current test with the rendered diagnostic.
inline Program parseOrDie(const std::string& text, const std::string& file = "test.hir") {
  auto parsed = parseProgram(text);
  if (!parsed) {
    ADD_FAILURE() << renderDiagnostic(parsed.error(), file, text);
    return Program{};
  }
  return std::move(*parsed);
}

}  // namespace hostir::testing

namespace hostir::testing {

// The fenced code blocks of a Markdown file that start with `program` (after
// comment lines), e.g. the programs of docs/hostir-language.md.
inline std::vector<std::string> programBlocks(const std::string& markdown) {
  std::vector<std::string> blocks;
  std::istringstream in(markdown);
  std::string line, block;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      if (inside) {
        std::istringstream b(block);
        std::string first;
        while (std::getline(b, first) && (first.empty() || first[0] == '#')) {
        }
        if (first.rfind("program ", 0) == 0) blocks.push_back(block);
        block.clear();
      }
      inside = !inside;
      continue;
    }
    if (inside) block += line + "\n";
  }
  return blocks;
}

// Every program the project ships: the language doc's, examples/ and the golden inputs.
inline std::vector<std::pair<std::string, std::string>> shippedPrograms() {
  std::vector<std::pair<std::string, std::string>> programs;
  for (const std::string& block : programBlocks(readFile(sourceDir() / "docs" / "hostir-language.md")))
    programs.emplace_back("docs/hostir-language.md", block);
  for (const char* dir : {"examples", "tests/golden"})
    for (const auto& path : hirFiles(sourceDir() / dir))
      if (path.stem().string().find('.') == std::string::npos)
        programs.emplace_back(std::filesystem::relative(path, sourceDir()).string(), readFile(path));
  return programs;
}

}  // namespace hostir::testing
