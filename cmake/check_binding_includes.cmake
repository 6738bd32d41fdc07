# check_binding_includes.cmake: the layer check's rule for the Python bindings (CMakeLists.txt,
# GPUCRYPT_LAYER_CHECK): a quoted include in src/python names a public header ("gpucrypt/...") or
# a file of src/python itself by its bare name; anything else (a path into src/, "../...") fails
# the build, naming the file and the line. Run as cmake -DFILES=a|b -DSTAMP=out -P this.
string(REPLACE "|" ";" files "${FILES}")
set(violations "")
foreach(file ${files})
  file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line ${lines})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*$" "\\1" included "${line}")
    if(NOT included MATCHES "^gpucrypt/[A-Za-z0-9_.]+$" AND NOT included MATCHES "^[A-Za-z0-9_.]+$")
      string(APPEND violations "\n  ${file}: #include \"${included}\"")
    endif()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "the Python bindings may include only public headers (gpucrypt/...) and their own "
                      "files (src/python), not:${violations}")
endif()
file(WRITE ${STAMP} "ok\n")
