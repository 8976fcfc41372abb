# For each wheel in a directory and its subdirectories (a legacy release
# keeps each family's devel wheel in a folder of its own): its size, and the size of the same members
# (same names, order and attributes) zipped again by Python's zipfile at
# zlib level 6, the way the reference writes wheels. Prints one
# tab-separated line per wheel: name, our bytes, zipfile bytes, and the
# same two sums over the members' compressed data alone.
import os, pathlib, shutil, sys, tempfile, zipfile

root = pathlib.Path(sys.argv[1])
for wheel in sorted(root.rglob("*.whl")):
    with zipfile.ZipFile(wheel) as ours, tempfile.TemporaryFile() as out:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as theirs:
            for info in ours.infolist():
                copy = zipfile.ZipInfo(info.filename, info.date_time)
                copy.external_attr = info.external_attr
                copy.create_system = info.create_system
                copy.compress_type = zipfile.ZIP_DEFLATED
                copy.file_size = info.file_size
                with ours.open(info) as src, theirs.open(copy, "w") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            theirs_data = sum(i.compress_size for i in theirs.infolist())
        theirs_bytes = out.tell()
        ours_data = sum(i.compress_size for i in ours.infolist())
    print(wheel.relative_to(root).as_posix(), wheel.stat().st_size, theirs_bytes, ours_data, theirs_data, sep="\t")
