"""The pure package of `rocm-sdk-libraries` (legacy builds:
`rocm_sdk_libraries_{family}`). The libraries live in the platform package
beside it; find them with `rocm_sdk.find_libraries`."""
