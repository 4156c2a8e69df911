// The infersim program: everything it does lives in the library.
#include <iostream>

#include "cli/command_line.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return infersim::run_command_line(std::vector<std::string>(argv + 1, argv + argc), std::cout,
                                    std::cerr);
}
