# The canonical CPU build of the addon. Source lists come from native/sources.json (one list for every
# build). Kernels for each ISA are compiled with their own flags into their own static library and
# chosen at run time (native/kernels/dispatch.cpp), so the addon runs on any x86-64 with AVX2 while
# using AVX-512 where the CPU and OS support it: the same kernels_simd family sources are compiled once per
# ISA, which the TM_KERNELS_<ISA> define selects (native/kernels/simd/isa.h). `--build_tests=1` adds the C++
# unit-test executable and a third build of those sources, the AVX-512 kernels emulated through SIMDe on
# AVX2 hardware (Debian/Ubuntu package libsimde-dev), so every level is tested on every machine. The AMX tile
# kernels (kernels_amx, -mamx-tile -mamx-int8) are built the same way: for real, and for the tests against a
# strict scalar tile emulator over the emulated AVX-512 (native/kernels/amx/tile-emulator.h).
{
  "variables": {
    "build_tests%": 0,
    "tm_cflags": ["-std=c++17", "-O3", "-fvisibility=hidden", "-fno-math-errno", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
  },
  "target_defaults": {
    "include_dirs": ["native"],
    "cflags!": ["-fno-exceptions"],
    "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++14"],
    "cflags_cc": ["<@(tm_cflags)", "-fexceptions", "-pthread"],
    "ldflags": ["-pthread"],
    "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED"]
  },
  "targets": [
    {
      "target_name": "tm_kernels_avx2",
      "type": "static_library",
      "cflags_cc": ["-mavx2", "-mfma", "-mf16c", "-mbmi2"],
      "defines": ["TM_KERNELS_AVX2"],
      "sources": ["<!@(node -p \"require('./native/sources.json').kernels_simd.join(' ')\")", "native/base/empty.cpp"]
    },
    {
      "target_name": "tm_kernels_avx512",
      "type": "static_library",
      "cflags_cc": ["-mavx2", "-mfma", "-mf16c", "-mbmi2", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx512vnni"],
      "defines": ["TM_KERNELS_AVX512"],
      "sources": ["<!@(node -p \"require('./native/sources.json').kernels_simd.join(' ')\")", "native/base/empty.cpp"]
    },
    {
      "target_name": "tm_kernels_amx",
      "type": "static_library",
      "cflags_cc": ["-mavx2", "-mfma", "-mf16c", "-mbmi2", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx512vnni", "-mamx-tile", "-mamx-int8"],
      "defines": ["TM_KERNELS_AMX"],
      "sources": ["<!@(node -p \"require('./native/sources.json').kernels_amx.join(' ')\")"]
    },
    {
      "target_name": "tm_core",
      "type": "static_library",
      "dependencies": ["tm_kernels_avx2", "tm_kernels_avx512", "tm_kernels_amx"],
      "sources": ["<!@(node -p \"const s=require('./native/sources.json');['base','gguf','tokenizer','quant','kernels_ref','model','kv','sched','sample','engine'].flatMap(k=>s[k]).join(' ')\")"]
    },
    {
      "target_name": "tokenmill",
      "dependencies": ["tm_core", "tm_kernels_avx2", "tm_kernels_avx512", "tm_kernels_amx"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "sources": ["<!@(node -p \"const s=require('./native/sources.json');[...s.addon,...s.addon_cpu].join(' ')\")"]
    }
  ],
  "conditions": [
    ["build_tests==1", {
      "targets": [
        {
          "target_name": "tm_kernels_avx512_emulated",
          "type": "static_library",
          "cflags_cc": ["-mavx2", "-mfma", "-mf16c", "-mbmi2", "-Wno-psabi"],
          "defines": ["TM_KERNELS_AVX512_EMULATED"],
          "sources": ["<!@(node -p \"require('./native/sources.json').kernels_simd.join(' ')\")", "native/base/empty.cpp"]
        },
        {
          "target_name": "tm_kernels_amx_emulated",
          "type": "static_library",
          "cflags_cc": ["-mavx2", "-mfma", "-mf16c", "-mbmi2", "-Wno-psabi"],
          "defines": ["TM_KERNELS_AMX_EMULATED"],
          "sources": ["<!@(node -p \"require('./native/sources.json').kernels_amx.join(' ')\")"]
        },
        {
          "target_name": "tokenmill_cpp_tests",
          "type": "executable",
          "dependencies": ["tm_core", "tm_kernels_avx2", "tm_kernels_avx512", "tm_kernels_amx", "tm_kernels_avx512_emulated", "tm_kernels_amx_emulated"],
          "include_dirs": ["test/cpp"],
          "sources": ["<!@(node -p \"require('./native/sources.json').tests.join(' ')\")"]
        }
      ]
    }]
  ]
}
