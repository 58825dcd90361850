# Install rules and the kernelcheck CMake package (find_package(kernelcheck)).
