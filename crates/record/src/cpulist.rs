//! CPU lists as the kernel and users write them (`0-3,8,10-11`): the `--cpus` option and
//! sysfs's `online` file share one parser.

/// The CPUs of a list, sorted and without duplicates; `None` when it is malformed.
pub(crate) fn parse(text: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((first, last)) => {
                let (first, last): (u32, u32) = (first.trim().parse().ok()?, last.trim().parse().ok()?);
                if first > last {
                    return None;
                }
                cpus.extend(first..=last);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Some(cpus)
}

/// A sorted list of CPUs as the kernel writes it (`0-3,8`).
pub(crate) fn format(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i { format!("{}-{}", cpus[i], cpus[j]) } else { cpus[i].to_string() });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::{format, parse};

    #[test]
    fn formatting_joins_runs() {
        assert_eq!(format(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(format(&[3]), "3");
        assert_eq!(format(&[]), "");
        assert_eq!(parse(&format(&[0, 2, 3, 4])), Some(vec![0, 2, 3, 4]));
    }

    #[test]
    fn ranges_and_single_cpus() {
        assert_eq!(parse("0-2,5,1\n"), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse(""), Some(vec![]));
        assert_eq!(parse("3-1"), None);
        assert_eq!(parse("a"), None);
    }
}
