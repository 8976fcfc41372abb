//! Snapshots of the generated `.dist-info` text.

mod common;

use common::*;
use wheel_writer::MemorySink;

fn text(sink: &MemorySink, path: &str) -> String {
    String::from_utf8(sink.get(path).unwrap().to_vec()).unwrap()
}

#[test]
fn dist_info_files() {
    let wheel = sample_wheel(&ALL);
    let mut sink = MemorySink::new();
    wheel.write_into(&mut sink).unwrap();
    let info = wheel.dist_info_dir();
    insta::assert_snapshot!("metadata", text(&sink, &format!("{info}/METADATA")));
    insta::assert_snapshot!("wheel", text(&sink, &format!("{info}/WHEEL")));
    insta::assert_snapshot!(
        "entry_points",
        text(&sink, &format!("{info}/entry_points.txt"))
    );
    insta::assert_snapshot!("record", text(&sink, &format!("{info}/RECORD")));
}
