//! Appends search-path entries to one ELF file and forces `DT_RPATH`:
//! `cargo run -p elf-surgery --example edit_rpath -- FILE ENTRY...`
#![allow(clippy::print_stdout)]

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let file = std::path::PathBuf::from(args.next().ok_or("usage: edit_rpath FILE ENTRY...")?);
    let entries: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    let request = elf_surgery::SearchPathEdit::append(entries).force_rpath();
    let edit = elf_surgery::edit_file(&file, &request)?;
    println!(
        "{}: {} patches, {} bytes appended, unchanged: {:?}",
        file.display(),
        edit.patches().len(),
        edit.output_len() - edit.source_len(),
        edit.unchanged_reason()
    );
    Ok(())
}
