//! What the examples share: reading a trace CSV.
use fabric_core::FlowSpec;

/// The flows of a trace CSV at `path`: with a header (as `flowsched generate` writes, or
/// YAPS's id,arrival_s,src,dst,size_bytes), the columns arrival_s, src, dst and size_bytes by
/// name; without one, the first four columns are those. Panics on a bad file (examples only).
pub fn read_trace(path: &str) -> Vec<FlowSpec> {
    let text = std::fs::read_to_string(path).expect("trace file");
    let mut lines = text.lines().filter(|l| !l.is_empty()).peekable();
    let mut col = [0usize, 1, 2, 3];
    if lines.peek().is_some_and(|l| l.starts_with(|c: char| c.is_ascii_alphabetic())) {
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        for (k, name) in ["arrival_s", "src", "dst", "size_bytes"].iter().enumerate() {
            col[k] = head.iter().position(|h| h == name).unwrap_or_else(|| panic!("no {name} column"));
        }
    }
    lines
        .map(|l| {
            let v: Vec<&str> = l.split(',').collect();
            FlowSpec::new(v[col[0]].parse().unwrap(), v[col[1]].parse().unwrap(), v[col[2]].parse().unwrap(), v[col[3]].parse().unwrap())
        })
        .collect()
}
