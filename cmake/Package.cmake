# `cpack -G DEB` (run from the build directory): a Debian package of what
# `cmake --install` installs: the cairn binary, its shell completions and
# man pages (cli/CMakeLists.txt). Dependencies are computed from the
# binary's shared libraries by dpkg-shlibdeps.
# `make install` and cpack build what they install (cairn), not every
# target: the package test must not compile the whole test suite, one
# file at a time, to package one binary.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cairn)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Cairn developers <cairn@example.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Declarative infrastructure as code for the Infrastructure Management API")
set(CPACK_PACKAGE_DESCRIPTION
    "cairn reads YAML manifests of desired resources, plans the changes against the live API and its recorded state, and applies them exactly once. cairn serve runs a local control-plane server for the API.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
