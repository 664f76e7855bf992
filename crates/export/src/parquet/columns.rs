//! A Parquet file written a row at a time into column buffers, flushed as row groups
//! through the parquet crate's column writers (no Arrow in between). Times are
//! delta-encoded with min/max statistics per row group (so readers skip groups outside a
//! time range); text is dictionary-encoded (names repeat); other numbers are plain.
//! Pages are Snappy-compressed (zstd level 1 took a fifth of the time). Statistics and dictionaries on every column cost
//! more than half of the writing time and bought little.

use crate::{ExportError, Result};
use ::parquet::basic::{Compression, Encoding, LogicalType, Repetition, Type as Physical};
use ::parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int64Type};
use ::parquet::file::properties::{EnabledStatistics, WriterProperties};
use ::parquet::file::writer::SerializedFileWriter;
use ::parquet::schema::types::{ColumnPath, Type};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per row group: bounds memory per table (many tables fill at once) while keeping
/// groups as large as DuckDB's own (122,880 rows).
const ROW_GROUP_ROWS: usize = 1 << 17;

/// What a column holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A signed integer.
    Int,
    /// A time or duration in nanoseconds: delta-encoded, no dictionary.
    Time,
    /// An unsigned 64-bit integer (Parquet `UINT_64`).
    Uint,
    Bool,
    /// UTF-8 text.
    Text,
    /// Bytes of no known type.
    Bytes,
    /// A list of signed integers.
    IntList,
}

/// A column's name, kind and whether it may be null.
#[derive(Clone, Debug)]
pub struct Spec {
    pub name: String,
    pub kind: Kind,
    pub nullable: bool,
}

impl Spec {
    pub fn new(name: impl Into<String>, kind: Kind) -> Spec {
        Spec { name: name.into(), kind, nullable: false }
    }

    pub fn nullable(name: impl Into<String>, kind: Kind) -> Spec {
        Spec { name: name.into(), kind, nullable: true }
    }
}

#[derive(Default)]
struct Buffer {
    ints: Vec<i64>,
    bools: Vec<bool>,
    bytes: Vec<u8>,
    ends: Vec<usize>,
    defs: Vec<i16>,
    reps: Vec<i16>,
}

/// One Parquet file being written.
pub struct TableWriter {
    path: PathBuf,
    specs: Vec<Spec>,
    buffers: Vec<Buffer>,
    rows: usize,
    total_rows: u64,
    writer: SerializedFileWriter<BufWriter<File>>,
}

impl TableWriter {
    /// Creates the file (and its directory).
    pub fn create(path: &Path, specs: Vec<Spec>) -> Result<TableWriter> {
        let pq = |source| ExportError::Parquet { path: path.display().to_string(), source };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| ExportError::io(dir, e))?;
        }
        let file = File::create(path).map_err(|e| ExportError::io(path, e))?;
        let schema = Arc::new(schema(&specs).map_err(pq)?);
        let mut properties = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_size(ROW_GROUP_ROWS)
            .set_created_by(format!("schedlens {}", env!("CARGO_PKG_VERSION")))
            .set_dictionary_enabled(false)
            .set_statistics_enabled(EnabledStatistics::None);
        for spec in &specs {
            let column = ColumnPath::from(spec.name.as_str());
            properties = match spec.kind {
                Kind::Text => properties.set_column_dictionary_enabled(column, true),
                Kind::Time => properties
                    .set_column_encoding(column.clone(), Encoding::DELTA_BINARY_PACKED)
                    .set_column_statistics_enabled(column, EnabledStatistics::Chunk),
                _ => properties,
            };
        }
        let writer =
            SerializedFileWriter::new(BufWriter::with_capacity(1 << 20, file), schema, Arc::new(properties.build()))
                .map_err(pq)?;
        let buffers = specs.iter().map(|_| Buffer::default()).collect();
        Ok(TableWriter { path: path.to_path_buf(), specs, buffers, rows: 0, total_rows: 0, writer })
    }

    /// Starts a row: give every column's value in order, then [`Row::end`].
    pub fn row(&mut self) -> Row<'_> {
        Row { table: self, column: 0 }
    }

    /// Finishes the file; returns the number of rows written.
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        let path = self.path.display().to_string();
        self.writer.close().map_err(|source| ExportError::Parquet { path, source })?;
        Ok(self.total_rows)
    }

    fn flush(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let path = self.path.display().to_string();
        let pq = |source| ExportError::Parquet { path: path.clone(), source };
        let mut group = self.writer.next_row_group().map_err(pq)?;
        for (spec, buffer) in self.specs.iter().zip(&mut self.buffers) {
            let mut column = group.next_column().map_err(pq)?.expect("one column writer per spec");
            let defs = (spec.nullable || spec.kind == Kind::IntList).then_some(&buffer.defs[..]);
            let reps = (spec.kind == Kind::IntList).then_some(&buffer.reps[..]);
            match spec.kind {
                Kind::Int | Kind::Time | Kind::Uint | Kind::IntList => {
                    column.typed::<Int64Type>().write_batch(&buffer.ints, defs, reps).map_err(pq)?;
                }
                Kind::Bool => {
                    column.typed::<BoolType>().write_batch(&buffer.bools, defs, reps).map_err(pq)?;
                }
                Kind::Text | Kind::Bytes => {
                    let data = bytes::Bytes::from(std::mem::take(&mut buffer.bytes));
                    let mut start = 0;
                    let values: Vec<ByteArray> = buffer
                        .ends
                        .iter()
                        .map(|&end| {
                            let value = ByteArray::from(data.slice(start..end));
                            start = end;
                            value
                        })
                        .collect();
                    column.typed::<ByteArrayType>().write_batch(&values, defs, reps).map_err(pq)?;
                }
            }
            column.close().map_err(pq)?;
            *buffer = Buffer::default();
        }
        group.close().map_err(pq)?;
        self.total_rows += self.rows as u64;
        self.rows = 0;
        Ok(())
    }
}

/// One row being filled, column by column.
pub struct Row<'t> {
    table: &'t mut TableWriter,
    column: usize,
}

impl Row<'_> {
    fn next(&mut self) -> (&Spec, &mut Buffer) {
        let column = self.column;
        self.column += 1;
        (&self.table.specs[column], &mut self.table.buffers[column])
    }

    fn present(spec: &Spec, buffer: &mut Buffer) {
        if spec.nullable {
            buffer.defs.push(1);
        }
    }

    pub fn int(mut self, value: i64) -> Self {
        let (spec, buffer) = self.next();
        Self::present(spec, buffer);
        buffer.ints.push(value);
        self
    }

    pub fn bool(mut self, value: bool) -> Self {
        let (spec, buffer) = self.next();
        Self::present(spec, buffer);
        buffer.bools.push(value);
        self
    }

    /// Text (invalid UTF-8 replaced) or bytes, as the column's kind says.
    pub fn bytes(mut self, value: &[u8]) -> Self {
        let (spec, buffer) = self.next();
        Self::present(spec, buffer);
        if spec.kind == Kind::Text && std::str::from_utf8(value).is_err() {
            buffer.bytes.extend_from_slice(String::from_utf8_lossy(value).as_bytes());
        } else {
            buffer.bytes.extend_from_slice(value);
        }
        buffer.ends.push(buffer.bytes.len());
        self
    }

    pub fn text(self, value: &str) -> Self {
        self.bytes(value.as_bytes())
    }

    pub fn ints(mut self, values: impl Iterator<Item = i64>) -> Self {
        let (_, buffer) = self.next();
        let mut empty = true;
        for value in values {
            buffer.reps.push(if empty { 0 } else { 1 });
            buffer.defs.push(2);
            buffer.ints.push(value);
            empty = false;
        }
        if empty {
            buffer.reps.push(0);
            buffer.defs.push(1);
        }
        self
    }

    /// A null in a nullable column.
    pub fn null(mut self) -> Self {
        let (spec, buffer) = self.next();
        debug_assert!(spec.nullable, "{} is not nullable", spec.name);
        buffer.defs.push(0);
        if spec.kind == Kind::IntList {
            buffer.reps.push(0);
        }
        self
    }

    pub fn opt_int(self, value: Option<i64>) -> Self {
        match value {
            Some(v) => self.int(v),
            None => self.null(),
        }
    }

    pub fn opt_text(self, value: Option<&str>) -> Self {
        match value {
            Some(v) => self.text(v),
            None => self.null(),
        }
    }

    /// Ends the row (every column must have been given a value).
    pub fn end(self) -> Result<()> {
        debug_assert_eq!(self.column, self.table.specs.len(), "a value for every column");
        self.table.rows += 1;
        if self.table.rows >= ROW_GROUP_ROWS { self.table.flush() } else { Ok(()) }
    }
}

fn schema(specs: &[Spec]) -> ::parquet::errors::Result<Type> {
    let fields = specs.iter().map(|spec| column_type(spec).map(Arc::new)).collect::<::parquet::errors::Result<_>>()?;
    Type::group_type_builder("schema").with_fields(fields).build()
}

fn column_type(spec: &Spec) -> ::parquet::errors::Result<Type> {
    let repetition =
        if spec.nullable || spec.kind == Kind::IntList { Repetition::OPTIONAL } else { Repetition::REQUIRED };
    let primitive = |physical, logical| {
        Type::primitive_type_builder(&spec.name, physical)
            .with_repetition(repetition)
            .with_logical_type(logical)
            .build()
    };
    match spec.kind {
        Kind::Int | Kind::Time => primitive(Physical::INT64, None),
        Kind::Uint => primitive(Physical::INT64, Some(LogicalType::Integer { bit_width: 64, is_signed: false })),
        Kind::Bool => primitive(Physical::BOOLEAN, None),
        Kind::Text => primitive(Physical::BYTE_ARRAY, Some(LogicalType::String)),
        Kind::Bytes => primitive(Physical::BYTE_ARRAY, None),
        Kind::IntList => {
            let element = Type::primitive_type_builder("element", Physical::INT64)
                .with_repetition(Repetition::REQUIRED)
                .build()?;
            let list = Type::group_type_builder("list")
                .with_repetition(Repetition::REPEATED)
                .with_fields(vec![Arc::new(element)])
                .build()?;
            Type::group_type_builder(&spec.name)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(Some(LogicalType::List))
                .with_fields(vec![Arc::new(list)])
                .build()
        }
    }
}
