//! Criterion benchmarks of the marker parser: a realistic reply and a 64 KiB payload marker at
//! several chunk sizes, plus inputs of double size to show linear total work.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use stepwise_core::markers::{MarkerParser, MarkerRegistry};

const REPLY: &str = include_str!("../../../tests/fixtures/reply-2k.txt");
const SCHEMA: &str = include_str!("../../../tests/fixtures/schema-64k.txt");

fn parse_in_chunks(text: &str, chunk: usize) -> usize {
    let mut registry = MarkerRegistry::new();
    registry
        .register_payload("SCHEMA_PROPOSAL")
        .expect("valid name");
    let mut parser = MarkerParser::with_registry(registry);
    let mut events = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = chunk.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        events += parser.feed(&rest[..end]).count();
        rest = &rest[end..];
    }
    events += parser.end().count();
    events + parser.finish().payloads.len()
}

fn chunk_sizes(c: &mut Criterion) {
    for (name, text) in [("reply_2k", REPLY), ("payload_64k", SCHEMA)] {
        let mut group = c.benchmark_group(format!("markers/{name}"));
        group.throughput(Throughput::Bytes(text.len() as u64));
        for chunk in [4usize, 16, 1024] {
            group.bench_with_input(BenchmarkId::new("chunk", chunk), &chunk, |b, &chunk| {
                b.iter(|| parse_in_chunks(black_box(text), chunk))
            });
        }
        group.finish();
    }
}

fn doubling(c: &mut Criterion) {
    let reply_8 = REPLY.repeat(8);
    let reply_16 = REPLY.repeat(16);
    let schema_2 = SCHEMA.repeat(2);
    let mut group = c.benchmark_group("markers/doubling");
    for (name, text) in [
        ("reply_x8", reply_8.as_str()),
        ("reply_x16", &reply_16),
        ("payload_x1", SCHEMA),
        ("payload_x2", &schema_2),
    ] {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new(name, 16), &text, |b, text| {
            b.iter(|| parse_in_chunks(black_box(text), 16))
        });
    }
    group.finish();
}

criterion_group!(benches, chunk_sizes, doubling);
criterion_main!(benches);
