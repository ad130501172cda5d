//! Knowledge files: reading them safely, parsing with positions, reading
//! every item kind, finding files under a root, appending an item (and
//! refusing one that holds a credential, `secrets`), and whose files are
//! trusted at all (`trust`).

pub mod append;
pub mod fields;
pub mod file;
pub mod item;
pub mod kinds;
pub mod node;
pub mod read;
pub mod retire;
pub mod scan;
pub mod secrets;
pub mod trust;
pub mod view;

pub use file::{load_file, parse_file, Diagnostic, FileKind, FileLoad, MAX_FILE_BYTES};
pub use item::{Body, Item, Source};
pub use node::Pos;
