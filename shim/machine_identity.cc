#include "shim/machine_identity.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include "kernels/runtime/cpu_features.h"

namespace amxblas {

std::string cpu_description() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    char vendor[13] = {};
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        std::memcpy(vendor, &b, 4);
        std::memcpy(vendor + 4, &d, 4);
        std::memcpy(vendor + 8, &c, 4);
    }
    unsigned family = 0, model = 0, stepping = 0;
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        // The displayed family and model (Intel SDM vol. 2A, CPUID leaf 1: the extended fields
        // count for family 15, and for the model also for family 6).
        const unsigned base_family = (a >> 8) & 0xF, base_model = (a >> 4) & 0xF;
        family = base_family == 0xF ? base_family + ((a >> 20) & 0xFF) : base_family;
        model = base_family == 0x6 || base_family == 0xF ? (((a >> 16) & 0xF) << 4) + base_model : base_model;
        stepping = a & 0xF;
    }
    char brand[49] = {};
    if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
        for (unsigned leaf = 0; leaf < 3; ++leaf) {
            __get_cpuid(0x80000002 + leaf, &a, &b, &c, &d);
            const unsigned regs[4] = {a, b, c, d};
            std::memcpy(brand + 16 * leaf, regs, 16);
        }
    }
    // The brand string may be padded with spaces on either side; control characters never belong.
    std::string name(brand);
    for (char& ch : name)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
    const std::size_t first = name.find_first_not_of(' ');
    name = first == std::string::npos ? "" : name.substr(first, name.find_last_not_of(' ') + 1 - first);
    for (char& ch : vendor)
        if (ch && (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)) ch = '?';
    return std::string(vendor) + " family " + std::to_string(family) + " model " + std::to_string(model) +
           " stepping " + std::to_string(stepping) + ": " + (name.empty() ? "?" : name);
}

std::string cpu_feature_list() {
    std::string s;
    auto add = [&s](bool has, const char* name) {
        if (has) s += (s.empty() ? "" : " ") + std::string(name);
    };
    add(kernels::cpu_has_avx2(), "avx2");
    add(kernels::cpu_has_avx512_split(), "avx512");
    add(kernels::cpu_has_avx512_bf16(), "avx512-bf16");
    add(kernels::cpu_has_avx512_vnni(), "avx512-vnni");
    add(kernels::cpu_has_amx_bf16(), "amx");
    return s.empty() ? "none" : s;
}

namespace {

// The GNU build ID of the loaded object named `name`, as hex; "" where it has none.
std::string build_id(const char* name) {
    struct Search {
        const char* name;
        std::string hex;
    } search{name, ""};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            auto* s = static_cast<Search*>(data);
            if (!info->dlpi_name || std::strcmp(info->dlpi_name, s->name) != 0) return 0;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                if (ph.p_type != PT_NOTE) continue;
                const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
                const char* end = p + ph.p_memsz;
                while (p + sizeof(ElfW(Nhdr)) <= end) {
                    const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
                    const char* owner = p + sizeof(ElfW(Nhdr));
                    const char* desc = owner + ((note->n_namesz + 3) & ~3u);
                    const char* next = desc + ((note->n_descsz + 3) & ~3u);
                    if (next > end) break;
                    if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(owner, "GNU", 4) == 0) {
                        static const char digits[] = "0123456789abcdef";
                        for (unsigned j = 0; j < note->n_descsz; ++j) {
                            const unsigned char byte = static_cast<unsigned char>(desc[j]);
                            s->hex += digits[byte >> 4];
                            s->hex += digits[byte & 15];
                        }
                        return 1;
                    }
                    p = next;
                }
            }
            return 1;  // the object, without a build ID
        },
        &search);
    return search.hex;
}

}  // namespace

LibraryIdentity identify_library(const void* symbol) {
    LibraryIdentity id;
    Dl_info info{};
    if (!symbol || !dladdr(symbol, &info) || !info.dli_fname || !*info.dli_fname) return id;
    char resolved[PATH_MAX];
    id.path = realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
    const std::string hex = build_id(info.dli_fname);
    if (!hex.empty()) {
        id.build = "build-id " + hex;
    } else {
        struct stat st;
        id.build = stat(id.path.c_str(), &st) == 0 ? "size " + std::to_string(st.st_size) + " mtime " +
                                                         std::to_string(static_cast<long long>(st.st_mtime))
                                                   : "unknown";
    }
    // OpenBLAS picks its kernels at run time (OPENBLAS_CORETYPE, else the CPU it detects): the
    // same file runs at another speed with other kernels, so the one in use is part of the build.
    if (void* h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) {
        using CoreName = char* (*)();
        if (auto* core = reinterpret_cast<CoreName>(dlsym(h, "openblas_get_corename")))
            if (const char* name = core(); name && *name) id.build += std::string(", core ") + name;
        dlclose(h);
    }
    return id;
}

}  // namespace amxblas
