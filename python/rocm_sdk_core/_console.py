"""What the console-script modules of core and the profiler share.

Each `_cli` module keeps a `ScriptTable`: it reads the `_dist_info.json`
beside the module and turns the `console_scripts` records of one package
into the functions pip's scripts import (`from rocm_sdk_core._cli import
amdclang_pp`), through the module-level `__getattr__` of PEP 562. Only `os`,
`sys` and `json` are imported: this is on every tool launch's warm path.
"""

import json
import os
import sys

# Type names for mypy only: `typing` stays off the warm path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, NoReturn, Optional

    #: One `console_scripts` record of `_dist_info.json`.
    Script = dict[str, Any]

#: Exit status for "tool not found", as shells use it.
EXIT_NOT_FOUND = 127
#: Exit status for "found but cannot run".
EXIT_NOT_EXECUTABLE = 126


def fail(message: str, status: int) -> "NoReturn":
    """One line on stderr, then exit with `status`."""
    sys.stderr.write(f"{message}\n")
    sys.exit(status)


class ScriptTable:
    """The console scripts of `package` (`core`, `profiler`) described by the
    document beside `module_file`; `launch(record)` runs one."""

    def __init__(
        self,
        module_file: str,
        package: str,
        dist_name: str,
        launch: "Callable[[Script], None]",
    ) -> None:
        self.package_dir = os.path.dirname(os.path.abspath(module_file))
        self.site = os.path.dirname(self.package_dir)
        self.package = package
        self.dist_name = dist_name
        self.launch = launch
        self._document: Optional[dict[str, Any]] = None

    def document(self) -> "dict[str, Any]":
        """`_dist_info.json`, read once."""
        if self._document is None:
            path = os.path.join(self.package_dir, "_dist_info.json")
            try:
                with open(path, encoding="utf-8") as f:
                    document = json.load(f)
            except (OSError, ValueError) as e:
                fail(f"cannot read {path} ({e}); reinstall {self.dist_name}", 1)
            if not isinstance(document, dict):
                fail(f"{path} is not a JSON object; reinstall {self.dist_name}", 1)
            self._document = document
        return self._document

    def scripts(self) -> "dict[str, Script]":
        """Function name → `console_scripts` record, for this package."""
        return {
            s["function"]: s
            for s in self.document().get("console_scripts", ())
            if s["package"] == self.package
        }

    def platform_dir(self, logical: str) -> str:
        """The platform package directory of a logical package in this site."""
        for record in self.document()["packages"]:
            if record["logical"] == logical and record.get("platform_package_template"):
                return os.path.join(self.site, str(record["platform_package_template"]))
        fail(f"{os.path.join(self.package_dir, '_dist_info.json')} names no `{logical}` package", 1)

    def function(self, name: str) -> "Callable[[], None]":
        """The module `__getattr__`: the script function called `name`."""
        if name.startswith("__"):
            raise AttributeError(name)
        script = self.scripts().get(name)
        if script is None:
            raise AttributeError(f"no console script function {name!r} in {self.package_dir}")

        def run() -> None:
            return self.launch(script)

        run.__name__ = run.__qualname__ = name
        run.__doc__ = f"Runs `{script['name']}` ({script['relpath']})."
        return run

    def names(self, module_globals: "dict[str, Any]") -> "list[str]":
        """The module `__dir__`."""
        return sorted([*module_globals, *self.scripts()])
