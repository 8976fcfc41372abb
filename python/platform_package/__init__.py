"""A ROCm platform package: native libraries and tools laid out like an
install prefix. Nothing to import; use `rocm_sdk.find_libraries` or
`rocm-sdk path`."""
