add_library(hostir_npy STATIC ${CMAKE_CURRENT_SOURCE_DIR}/npy.cpp)
target_link_libraries(hostir_npy PUBLIC hostir_ir)
