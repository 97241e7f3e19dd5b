# Writes the usage example of a header's comment (the lines between
# "// Example" and "// End of example.", without their "//   ") into a
# program, so a test compiles and runs the example exactly as documented.
# -DHEADER=... -DOUT=...
file(STRINGS ${HEADER} lines)
set(body "")
set(inside FALSE)
foreach(line IN LISTS lines)
  if(line MATCHES "^// End of example\\.")
    set(inside FALSE)
  elseif(inside)
    string(REGEX REPLACE "^//   ?" "" code "${line}")
    string(APPEND body "  ${code}\n")
  elseif(line MATCHES "^// Example")
    set(inside TRUE)
  endif()
endforeach()
if(body STREQUAL "")
  message(FATAL_ERROR "${HEADER}: no example between '// Example' and '// End of example.'")
endif()
get_filename_component(header_name ${HEADER} NAME)
file(WRITE ${OUT}.tmp "// Generated from the usage example of parasim/${header_name}.\n#include <cstdio>\n\n#include \"parasim/parasim.h\"\n\nint main() {\n${body}  return 0;\n}\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
