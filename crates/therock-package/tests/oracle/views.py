"""What Python's readers make of packages: the views the differential
oracle (tests/it/oracle.rs) compares with this project's readers.

Usage: python3 views.py LIST.json > VIEWS.json, where LIST.json is a list
of package paths; prints one view per package, in order. A view is what
pip's own readers see: zipfile's member names and bytes (the last record
of a name, as an installer takes it), the email parser's headers of
METADATA, WHEEL and PKG-INFO, importlib.metadata's entry points, and for
an sdist gzip's and tarfile's members. A reader that fails gives
{"error": ...} for its part.
"""

import email.parser
import email.policy
import gzip
import hashlib
import io
import json
import sys
import tarfile
import zipfile
from importlib.metadata import Sectioned


def headers(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return {"error": f"not UTF-8: {e}"}
    parser = email.parser.Parser(policy=email.policy.compat32)
    message = parser.parsestr(text, headersonly=True)
    return {
        "items": [[k, v] for k, v in message.items()],
        "defects": [type(d).__name__ for d in message.defects],
    }


def entry_points(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return {"error": f"not UTF-8: {e}"}
    return {
        "items": [
            [pair.name, pair.value.name, pair.value.value]
            for pair in Sectioned.section_pairs(text)
        ]
    }


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def wheel_view(path):
    try:
        archive = zipfile.ZipFile(path)
        infos = archive.infolist()
    except Exception as e:  # every failure is a view
        return {"error": f"zipfile: {type(e).__name__}: {e}"}
    names = [info.filename for info in infos]
    members = {}
    for name in dict.fromkeys(names):
        try:
            members[name] = sha256(archive.read(name))
        except Exception as e:
            members[name] = f"error: {type(e).__name__}: {e}"
    view = {"names": names, "members": members}
    tops = sorted(
        {n.split("/", 1)[0] for n in names if "/" in n and n.split("/", 1)[0].endswith(".dist-info")}
    )
    if len(tops) == 1:
        for file, parse in [
            ("METADATA", headers),
            ("WHEEL", headers),
            ("entry_points.txt", entry_points),
        ]:
            member = f"{tops[0]}/{file}"
            if member in members:
                try:
                    view[file] = parse(archive.read(member))
                except Exception as e:
                    view[file] = {"error": f"{type(e).__name__}: {e}"}
    return view


def sdist_view(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        tar_bytes = gzip.decompress(data)
    except Exception as e:
        return {"error": f"gzip: {type(e).__name__}: {e}"}
    try:
        archive = tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:")
        infos = archive.getmembers()
    except Exception as e:
        return {"error": f"tarfile: {type(e).__name__}: {e}"}
    names = [info.name for info in infos]
    kinds = [info.type.decode("latin-1") for info in infos]
    members = {}
    for info in infos:
        if info.isreg():
            try:
                members[info.name] = sha256(archive.extractfile(info).read())
            except Exception as e:
                members[info.name] = f"error: {type(e).__name__}: {e}"
    view = {"names": names, "types": kinds, "members": members}
    top = names[0].split("/", 1)[0] if names else ""
    pkg_info = f"{top}/PKG-INFO"
    regular = [i for i in infos if i.isreg() and i.name == pkg_info]
    if regular:
        view["PKG-INFO"] = headers(archive.extractfile(regular[-1]).read())
    return view


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        paths = json.load(f)
    views = []
    for path in paths:
        views.append(wheel_view(path) if path.endswith(".whl") else sdist_view(path))
    json.dump(views, sys.stdout)


if __name__ == "__main__":
    main()
