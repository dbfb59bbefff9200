# Writes the text file IN as a C++ string constant kMainSupportSource into OUT.
file(READ ${IN} text)
file(WRITE ${OUT} "// Generated from templates/main_support.c by EmbedText.cmake.\n"
  "namespace odlac {\nextern const char *const kMainSupportSource;\n"
  "const char *const kMainSupportSource = R\"odlac_embed(${text})odlac_embed\";\n}\n")
