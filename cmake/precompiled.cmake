# The standard headers nearly every library file includes, precompiled once for each
# group of targets built with the same flags (a PCH is only valid under the flags it was
# made with): about a third of a small file's compile time on 2 cores.
#   kc_precompile_std(target)             makes the PCH for `target`
#   kc_precompile_std(target REUSE owner)  uses `owner`'s (same -O, -fPIC as owner)
# Every file still includes what it uses: a build with CMAKE_DISABLE_PRECOMPILE_HEADERS=ON
# must compile.
set(KC_STD_PCH_HEADERS <algorithm> <array> <cmath> <cstdint> <cstdio> <functional> <map> <memory> <optional>
                       <set> <sstream> <string> <string_view> <thread> <unordered_map> <variant> <vector>)

function(kc_precompile_std target)
  cmake_parse_arguments(P "" "REUSE" "" ${ARGN})
  if(P_REUSE)
    target_precompile_headers(${target} REUSE_FROM ${P_REUSE})
  else()
    target_precompile_headers(${target} PRIVATE ${KC_STD_PCH_HEADERS})
  endif()
endfunction()
