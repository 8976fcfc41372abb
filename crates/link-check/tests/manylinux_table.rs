//! `src/manylinux/table.rs` is `data/manylinux-policy.json` (auditwheel's
//! policies) written as Rust constants, so the library reads its policies
//! without a JSON parser. This test renders the table from the JSON again
//! and compares; `UPDATE_MANYLINUX_TABLE=1` rewrites the file instead
//! (after the data file is updated).

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

fn strings(value: &Value) -> String {
    let items: Vec<String> = value
        .as_array()
        .expect("a list of strings")
        .iter()
        .map(|s| format!("{:?}", s.as_str().expect("a string")))
        .collect();
    format!("&[{}]", items.join(", "))
}

fn render(json: &str) -> String {
    let data: Value = serde_json::from_str(json).expect("data/manylinux-policy.json parses");
    let mut out = String::from(
        "// Generated from data/manylinux-policy.json by tests/manylinux_table.rs; do not\n\
         // edit. Regenerate: UPDATE_MANYLINUX_TABLE=1 cargo test -p link-check --test manylinux_table\n\
         \n\
         use super::{Arch, PolicyData};\n\
         \n\
         /// auditwheel's policies, in its file's order.\n\
         pub(super) const POLICIES: &[PolicyData] = &[\n",
    );
    for policy in data["policies"].as_array().expect("a list of policies") {
        let name = policy["name"].as_str().expect("a name");
        let priority = policy["priority"].as_u64().expect("a priority");
        let _ = writeln!(out, "    PolicyData {{");
        let _ = writeln!(out, "        name: {name:?},");
        let _ = writeln!(out, "        aliases: {},", strings(&policy["aliases"]));
        let _ = writeln!(out, "        priority: {priority},");
        let _ = writeln!(out, "        symbol_versions: &[");
        for (arch, namespaces) in policy["symbol_versions"].as_object().expect("a map") {
            let arch = match arch.as_str() {
                "x86_64" => "Arch::X86_64",
                "aarch64" => "Arch::Aarch64",
                other => panic!("architecture {other} is not one of Arch"),
            };
            let _ = writeln!(out, "            ({arch}, &[");
            for (namespace, versions) in namespaces.as_object().expect("a map") {
                let _ = writeln!(
                    out,
                    "                ({namespace:?}, {}),",
                    strings(versions)
                );
            }
            let _ = writeln!(out, "            ]),");
        }
        let _ = writeln!(out, "        ],");
        let _ = writeln!(
            out,
            "        libraries: {},",
            strings(&policy["lib_whitelist"])
        );
        let _ = writeln!(out, "        blacklist: &[");
        for (library, symbols) in policy["blacklist"].as_object().expect("a map") {
            let _ = writeln!(out, "            ({library:?}, {}),", strings(symbols));
        }
        let _ = writeln!(out, "        ],");
        let _ = writeln!(out, "    }},");
    }
    out.push_str("];\n");
    out
}

#[test]
fn the_table_is_the_data_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let json = std::fs::read_to_string(root.join("data/manylinux-policy.json")).unwrap();
    let table_path = root.join("src/manylinux/table.rs");
    let expected = render(&json);
    if std::env::var_os("UPDATE_MANYLINUX_TABLE").is_some() {
        std::fs::write(&table_path, &expected).unwrap();
        return;
    }
    let table = std::fs::read_to_string(&table_path).unwrap();
    assert!(
        table == expected,
        "src/manylinux/table.rs differs from data/manylinux-policy.json; \
         run UPDATE_MANYLINUX_TABLE=1 cargo test -p link-check --test manylinux_table"
    );
}
