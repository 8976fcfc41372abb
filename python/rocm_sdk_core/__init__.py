"""The pure package of `rocm-sdk-core`: console-script trampolines
(`_cli`), the native `rocm-sdk` program (`_bin/`) and `_dist_info.json`.
The libraries and tools themselves live in the platform package
`_rocm_sdk_core` beside it."""
