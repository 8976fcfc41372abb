"""The pure package of `rocm-profiler`: console-script trampolines (`_cli`)
and `_dist_info.json`. The tools live in the platform package
`_rocm_profiler` beside it."""
