# Writes the text file IN as a C++ string constant VAR (in namespace odlac) into OUT, so that
# odlac carries the file and needs nothing beside its executable.
file(READ ${IN} text)
get_filename_component(name ${IN} NAME)
string(FIND "${text}" ")odlac_embed\"" bad)
if(NOT bad EQUAL -1)
  message(FATAL_ERROR "${IN} holds the raw string's delimiter")
endif()
file(WRITE ${OUT} "// Generated from ${name} by EmbedText.cmake.\n"
  "namespace odlac {\nextern const char *const ${VAR};\n"
  "const char *const ${VAR} = R\"odlac_embed(${text})odlac_embed\";\n}\n")
