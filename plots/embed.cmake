# embed.cmake: writes OUT, a C file holding each figure template
# (plots/templates/NAME.gp) as a NUL-terminated byte array, and the table
# plots/gnuplot.c looks them up in. Run by the build: cmake -DOUT=...
# -DTEMPLATES="a.gp|b.gp" -P embed.cmake
string(REPLACE "|" ";" TEMPLATES "${TEMPLATES}")
set(text "/* Generated from the .gp files of plots/templates by plots/embed.cmake; do not edit. */\n")
string(APPEND text "#include \"plots/gnuplot.h\"\n\n")
set(table "")
foreach(path IN LISTS TEMPLATES)
  get_filename_component(name "${path}" NAME_WE)
  file(READ "${path}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(APPEND text "static const char s_${name}[] = {${bytes}0x00};\n")
  string(APPEND table "    {\"${name}\", s_${name}},\n")
endforeach()
string(APPEND text "\nconst gnuplot_template gnuplot_templates[] = {\n${table}    {0, 0},\n};\n")
file(WRITE "${OUT}" "${text}")
