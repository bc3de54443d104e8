//! A conversation's record in its object's SQLite storage: the header (the record without its
//! messages and requests) under one key, and each message and each context request a row of
//! its table, so a command writes what it changed and nothing else, however long the
//! conversation. Read whole once per object instance, then kept in memory (the object is the
//! record's only writer).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use stepwise_core::conversation::Conversation as Record;
use worker::{Result, SqlStorage, SqlStorageValue, Storage};

/// Storage key of the header. A new key, not the one the whole record was stored under before
/// rows: a build from before rows finds no conversation here rather than an empty one it would
/// write over.
const HEADER: &str = "conversation.rows";
/// Storage key of the whole record, as builds before rows stored it; moved into rows when read.
const WHOLE: &str = "conversation";
/// The two tables, made when missing.
const TABLES: &str = "CREATE TABLE IF NOT EXISTS messages (at INTEGER PRIMARY KEY, body TEXT NOT NULL); \
    CREATE TABLE IF NOT EXISTS requests (at INTEGER PRIMARY KEY, body TEXT NOT NULL)";

/// What the header key holds: the record without its rows, and how many rows of each table are
/// its own (a row past them, left by a write that failed half way, is not read, and is erased).
#[derive(Serialize, Deserialize)]
struct Header {
    record: Record,
    messages: usize,
    requests: usize,
}

/// The record of one conversation object: loaded once, then kept.
#[derive(Default)]
pub struct Rows {
    /// `None` until loaded; then the record, or `None` when there is no conversation.
    kept: RefCell<Option<Option<Rc<Record>>>>,
    /// This instance made the tables (a write makes them first, once).
    tables: Cell<bool>,
}

#[derive(Deserialize)]
struct Row {
    body: String,
}

impl Rows {
    /// The record as stored, if any (shared with the kept copy: a command reads it, and what
    /// it changes is a new record).
    pub async fn load(&self, storage: &Storage) -> Result<Option<Rc<Record>>> {
        if let Some(kept) = &*self.kept.borrow() {
            return Ok(kept.clone());
        }
        let record = read(storage, &self.tables).await?.map(Rc::new);
        *self.kept.borrow_mut() = Some(record.clone());
        Ok(record)
    }

    /// Stores `next`: the rows of the messages and requests that differ from the kept record's
    /// (all of them when nothing is kept), then its header, with no await between them (the
    /// runtime commits them together); `next` is then the kept record.
    pub async fn save(&self, storage: &Storage, next: Record) -> Result<Rc<Record>> {
        // Taken out: a failed write leaves nothing kept, and the next load reads storage.
        let before = self.kept.borrow_mut().take().flatten();
        let sql = storage.sql();
        let (messages, requests) = match &before {
            Some(before) => (&before.entries[..], &before.requests[..]),
            None => (&[][..], &[][..]),
        };
        write_changed(&sql, &self.tables, "messages", messages, &next.entries)?;
        write_changed(&sql, &self.tables, "requests", requests, &next.requests)?;
        storage.put(HEADER, header_of(&next)?).await?;
        let next = Rc::new(next);
        *self.kept.borrow_mut() = Some(Some(Rc::clone(&next)));
        Ok(next)
    }

    /// Erases the conversation, rows and every other key of the object.
    pub async fn erase(&self, storage: &Storage) -> Result<()> {
        self.kept.borrow_mut().take();
        self.tables.set(false);
        storage.sql().exec(
            "DROP TABLE IF EXISTS messages; DROP TABLE IF EXISTS requests",
            None,
        )?;
        storage.delete_all().await?;
        *self.kept.borrow_mut() = Some(None);
        Ok(())
    }
}

/// The stored record: the header and its rows. A record an earlier release stored whole is
/// moved into rows at once.
async fn read(storage: &Storage, tables: &Cell<bool>) -> Result<Option<Record>> {
    // Both keys in one call: a new conversation's object finds neither.
    let found = storage.get_multiple(vec![HEADER, WHOLE]).await?;
    let text = |key: &str| found.get(&key.into()).as_string();
    let sql = storage.sql();
    let Some(json) = text(HEADER) else {
        return match text(WHOLE) {
            Some(whole) => migrate(storage, &sql, tables, &whole).await,
            None => Ok(None),
        };
    };
    let Header {
        mut record,
        messages,
        requests,
    } = serde_json::from_str(&json)?;
    if messages + requests > 0 {
        make_tables(&sql, tables)?;
        record.entries = read_table(&sql, "messages", messages)?;
        record.requests = read_table(&sql, "requests", requests)?;
    }
    record.entries_from = 0;
    Ok(Some(record))
}

/// Makes the tables, unless this instance made them already.
fn make_tables(sql: &SqlStorage, tables: &Cell<bool>) -> Result<()> {
    if !tables.get() {
        sql.exec(TABLES, None)?;
        tables.set(true);
    }
    Ok(())
}

/// The whole record an earlier release stored under [`WHOLE`] (`json`), written as rows and a
/// header.
async fn migrate(
    storage: &Storage,
    sql: &SqlStorage,
    tables: &Cell<bool>,
    json: &str,
) -> Result<Option<Record>> {
    let record: Record = serde_json::from_str(json)?;
    make_tables(sql, tables)?;
    sql.exec("DELETE FROM messages; DELETE FROM requests", None)?;
    write_changed(sql, tables, "messages", &[], &record.entries)?;
    write_changed(sql, tables, "requests", &[], &record.requests)?;
    storage.put(HEADER, header_of(&record)?).await?;
    storage.delete(WHOLE).await?;
    Ok(Some(record))
}

/// The header of `record`, as stored.
fn header_of(record: &Record) -> Result<String> {
    let header = Header {
        record: record.newest_from(record.entries.len()),
        messages: record.entries.len(),
        requests: record.requests.len(),
    };
    Ok(serde_json::to_string(&header)?)
}

/// The first `count` rows of `table`, in order; rows past them are erased.
fn read_table<T: for<'de> Deserialize<'de>>(
    sql: &SqlStorage,
    table: &str,
    count: usize,
) -> Result<Vec<T>> {
    let count = SqlStorageValue::Integer(count as i64);
    sql.exec(&format!("DELETE FROM {table} WHERE at >= ?"), vec![count])?;
    let rows: Vec<Row> = sql
        .exec(&format!("SELECT body FROM {table} ORDER BY at"), None)?
        .to_array()?;
    rows.iter()
        .map(|row| serde_json::from_str(&row.body).map_err(Into::into))
        .collect()
}

/// Writes the rows of `next` that differ from `before` (by position), and deletes those past
/// its end. The tables are made by the first write (a conversation's first command writes no
/// row, and its turn waits on nothing more than the header).
fn write_changed<T: PartialEq + Serialize>(
    sql: &SqlStorage,
    tables: &Cell<bool>,
    table: &str,
    before: &[T],
    next: &[T],
) -> Result<()> {
    let upsert = format!("INSERT OR REPLACE INTO {table} (at, body) VALUES (?, ?)");
    for (at, item) in next.iter().enumerate() {
        if before.get(at) != Some(item) {
            make_tables(sql, tables)?;
            let body = serde_json::to_string(item)?;
            sql.exec(
                &upsert,
                vec![SqlStorageValue::Integer(at as i64), body.into()],
            )?;
        }
    }
    if next.len() < before.len() {
        make_tables(sql, tables)?;
        sql.exec(
            &format!("DELETE FROM {table} WHERE at >= ?"),
            vec![SqlStorageValue::Integer(next.len() as i64)],
        )?;
    }
    Ok(())
}
