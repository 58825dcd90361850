# The layering of harness/src (cmake -P): its folders in order, lowest first. A file may
# include headers of its own folder and of the folders below it, never of one above, so
# that no two folders include each other. Fails listing every `file: #include` that goes
# up, and every folder the order does not place. The one place the order is written.
# ops/ holds one folder per op (its module, docs/architecture.md): a module's file
# `<op>_<layer>.cpp` is of that layer (`<op>_core.cpp` of core), its other files (its
# headers, the headers of ops/ itself) of core, so that an op's code lives in one folder
# and each of its files still includes only what its layer may.
#   -D ROOT=source tree
set(layers core io backend judge checks stack run gen bench cli)

# The layer of harness/src file `file` (a path below src/), into `out`.
function(layer_of file out)
  string(REGEX MATCH "^[^/]+" folder "${file}")
  if(folder STREQUAL "ops")
    set(folder core)
    get_filename_component(name "${file}" NAME_WE)
    foreach(layer ${layers})
      if(name MATCHES "_${layer}$")
        set(folder ${layer})
      endif()
    endforeach()
  endif()
  set(${out} ${folder} PARENT_SCOPE)
endfunction()

set(src "${ROOT}/harness/src")
set(problems "")
file(GLOB folders RELATIVE "${src}" "${src}/*")
foreach(folder ${folders})
  if(IS_DIRECTORY "${src}/${folder}")
    list(FIND layers "${folder}" rank)
    if(rank EQUAL -1 AND NOT folder STREQUAL "ops")
      list(APPEND problems "harness/src/${folder}/: a folder the layering does not place (add it to tests/layering_check.cmake)")
    endif()
  endif()
endforeach()

file(GLOB_RECURSE files RELATIVE "${src}" "${src}/*.h" "${src}/*.cpp")
list(SORT files)
set(count 0)
foreach(file ${files})
  layer_of("${file}" own)
  list(FIND layers "${own}" own_rank)
  file(STRINGS "${src}/${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[A-Za-z0-9_]+/")
  foreach(line ${includes})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" target "${line}")
    layer_of("${target}" target)
    list(FIND layers "${target}" target_rank)
    if(target_rank EQUAL -1 OR own_rank EQUAL -1)  # kc/ (the public API), or a folder reported above
      continue()
    endif()
    math(EXPR count "${count} + 1")
    if(target_rank GREATER own_rank)
      string(STRIP "${line}" line)
      list(APPEND problems "harness/src/${file}: ${line} (${own} is below ${target})")
    endif()
  endforeach()
endforeach()

string(REPLACE ";" " < " order "${layers}")
if(problems)
  list(LENGTH problems n)
  string(REPLACE ";" "\n  " listed "${problems}")
  message(FATAL_ERROR "${n} break(s) of the layering ${order}:\n  ${listed}\n"
                      "move the code down, or split what the lower folder needs (docs/architecture.md)")
endif()
message(STATUS "${count} includes of harness/src headers, none going up: ${order}")
