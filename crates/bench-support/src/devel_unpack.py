import os, sys, tarfile
sp = sys.argv[1]
tar_path = os.path.join(sp, "rocm_sdk_devel", "_devel.tar")
compilers = {"amdclang", "amdclang++", "amdclang-cl", "amdclang-cpp", "amdflang", "amdlld", "amdllvm"}
with tarfile.open(tar_path) as tf:
    members = tf.getmembers()
    plain = [m for m in members if m.isdir() or m.isfile()]
    links = sorted((m for m in members if m.issym() or m.islnk()), key=lambda m: m.name)
    tf.extractall(sp, members=plain, filter="fully_trusted")
record = []
for m in members:
    if m.isfile():
        record.append(m.name)
# Links whose target is another link not made yet wait for the next pass,
# so chains resolve whatever the member order.
pending = links
while pending:
    waiting = []
    for m in pending:
        path = os.path.join(sp, m.name)
        if m.islnk():
            os.link(os.path.join(sp, m.linkname), path)
            record.append(m.name)
            continue
        target = os.path.join(os.path.dirname(path), m.linkname)
        parent, name = os.path.split(m.name)
        if os.path.isdir(target) or (parent == "_rocm_sdk_devel/bin" and name in compilers):
            os.symlink(m.linkname, path)
        elif os.path.exists(target):
            os.link(os.path.realpath(target), path)
        else:
            waiting.append(m)
            continue
        record.append(m.name)
    if len(waiting) == len(pending):
        break
    pending = waiting
dist_info = [d for d in os.listdir(sp) if d.startswith("rocm_sdk_devel-") and d.endswith(".dist-info")][0]
with open(os.path.join(sp, dist_info, "RECORD"), "a", newline="") as f:
    f.write("".join(p + ",,\n" for p in record))
os.remove(tar_path)
