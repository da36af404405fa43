// Prints the accuracy table (Eqs. 20-21) next to the paper's Table 4.
// Usage: kernels_accuracy_table [--backend=NAME] [threads] [N...]   (default N = 256 512 1024)
#include <cstdlib>

#include "tests/kernels/bf16/kernels_accuracy.h"

int main(int argc, char** argv) {
    if (int rc = kt::setup(argc, argv)) return rc;
    std::vector<int> sizes;
    int threads = 2;
    bool threads_set = false;
    for (int i = 1; i < argc; ++i) {
        if (argv[i][0] == '-') continue;
        if (!threads_set) {
            threads = std::atoi(argv[i]);
            threads_set = true;
        } else {
            sizes.push_back(std::atoi(argv[i]));
        }
    }
    if (sizes.empty()) sizes = {256, 512, 1024};
    for (int n : sizes) {
        kt::Errors e[kt::kVariants];
        if (!kt::measure(n, threads, e)) return 1;
        kt::print_row(n, e);
    }
    return 0;
}
