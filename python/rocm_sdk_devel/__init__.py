"""The pure package of `rocm-sdk-devel`: it carries `_devel.tar` (or
`.tar.xz`/`.tar.zst`), which `rocm-sdk init` unpacks into the sibling
`_rocm_sdk_devel/` and then deletes. Use `rocm-sdk path --root` for the tree."""
