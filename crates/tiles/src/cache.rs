//! Computed tiles kept for the next request that asks for them (a pan back, a second
//! trace's panel, a reload), least recently used dropped first once the bytes kept pass
//! a bound, so memory stays flat however long the session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A byte-bounded least-recently-used map from request keys to answers.
pub struct Cache {
    limit: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    clock: u64,
    bytes: usize,
    entries: HashMap<String, (u64, Arc<Vec<u8>>)>,
}

impl Cache {
    pub fn new(limit_bytes: usize) -> Cache {
        Cache { limit: limit_bytes, inner: Mutex::new(Inner::default()) }
    }

    pub fn get(&self, key: &str) -> Option<Arc<Vec<u8>>> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.clock += 1;
        let now = inner.clock;
        inner.entries.get_mut(key).map(|(used, value)| {
            *used = now;
            value.clone()
        })
    }

    pub fn put(&self, key: String, value: Arc<Vec<u8>>) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.clock += 1;
        let now = inner.clock;
        inner.bytes += value.len();
        if let Some((_, old)) = inner.entries.insert(key, (now, value)) {
            inner.bytes -= old.len();
        }
        while inner.bytes > self.limit && inner.entries.len() > 1 {
            let Some(oldest) = inner.entries.iter().min_by_key(|(_, (used, _))| *used).map(|(k, _)| k.clone()) else {
                break;
            };
            if let Some((_, gone)) = inner.entries.remove(&oldest) {
                inner.bytes -= gone.len();
            }
        }
    }

    /// Bytes kept now.
    pub fn bytes(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_recently_used_within_the_bound() {
        let cache = Cache::new(10);
        cache.put("a".into(), Arc::new(vec![0; 4]));
        cache.put("b".into(), Arc::new(vec![0; 4]));
        assert!(cache.get("a").is_some());
        cache.put("c".into(), Arc::new(vec![0; 4]));
        assert!(cache.get("b").is_none(), "least recently used goes first");
        assert!(cache.get("a").is_some() && cache.get("c").is_some());
        assert_eq!(cache.bytes(), 8);
        cache.put("a".into(), Arc::new(vec![0; 2]));
        assert_eq!(cache.bytes(), 6, "a replaced value is not counted twice");
    }
}
