//! The few functions and constants of the OTF2 C library (version 3, `otf2/otf2.h`) that
//! the writer uses, declared by hand from the headers. Types are the headers' typedefs:
//! references are `uint32_t` except locations (`uint64_t`), enums are `uint8_t`, flags
//! `uint32_t`, error codes `int`.

#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

pub type Archive = c_void;
pub type EvtWriter = c_void;
pub type DefWriter = c_void;
pub type GlobalDefWriter = c_void;
pub type ErrorCode = c_int;
pub type StringRef = u32;
pub type LocationRef = u64;
pub type TimeStamp = u64;

pub const SUCCESS: ErrorCode = 0;
pub const FILEMODE_WRITE: u8 = 0;
pub const SUBSTRATE_POSIX: u8 = 1;
pub const COMPRESSION_NONE: u8 = 1;
pub const CHUNK_SIZE_EVENTS: u64 = 1024 * 1024;
pub const CHUNK_SIZE_DEFINITIONS: u64 = 4 * 1024 * 1024;
pub const FLUSH: u8 = 1;
pub const UNDEFINED_U32: u32 = u32::MAX;
pub const UNDEFINED_TIMESTAMP: u64 = u64::MAX;

pub const LOCATION_GROUP_TYPE_PROCESS: u8 = 1;
pub const LOCATION_TYPE_CPU_THREAD: u8 = 1;
pub const REGION_ROLE_FUNCTION: u8 = 1;
pub const REGION_FLAG_NONE: u32 = 0;
pub const PARADIGM_USER: u8 = 1;
pub const PARADIGM_MPI: u8 = 4;
pub const GROUP_TYPE_COMM_LOCATIONS: u8 = 4;
pub const GROUP_TYPE_COMM_GROUP: u8 = 5;
pub const GROUP_FLAG_NONE: u32 = 0;
pub const COMM_FLAG_NONE: u32 = 0;
pub const METRIC_TYPE_USER: u8 = 3;
/// `OTF2_METRIC_ACCUMULATED_START`: a count since the start.
pub const METRIC_ACCUMULATED_START: u8 = 0;
/// `OTF2_METRIC_ABSOLUTE_NEXT`: a value that holds until the next sample.
pub const METRIC_ABSOLUTE_NEXT: u8 = 1 | (3 << 4);
pub const TYPE_UINT64: u8 = 4;
pub const BASE_DECIMAL: u8 = 1;
pub const METRIC_ASYNCHRONOUS: u8 = 2;
pub const RECORDER_KIND_CPU: u8 = 2;

#[repr(C)]
pub struct FlushCallbacks {
    pub pre_flush: extern "C" fn(*mut c_void, u8, LocationRef, *mut c_void, bool) -> u8,
    pub post_flush: Option<extern "C" fn(*mut c_void, u8, LocationRef) -> TimeStamp>,
}

#[repr(C)]
#[derive(Copy, Clone)]
pub union MetricValue {
    pub unsigned_int: u64,
}

unsafe extern "C" {
    pub fn OTF2_Archive_Open(
        path: *const c_char,
        name: *const c_char,
        mode: u8,
        chunk_size_events: u64,
        chunk_size_defs: u64,
        substrate: u8,
        compression: u8,
    ) -> *mut Archive;
    pub fn OTF2_Archive_Close(archive: *mut Archive) -> ErrorCode;
    pub fn OTF2_Archive_SetFlushCallbacks(
        archive: *mut Archive,
        callbacks: *const FlushCallbacks,
        data: *mut c_void,
    ) -> ErrorCode;
    pub fn OTF2_Archive_SetSerialCollectiveCallbacks(archive: *mut Archive) -> ErrorCode;
    pub fn OTF2_Archive_SetCreator(archive: *mut Archive, creator: *const c_char) -> ErrorCode;
    pub fn OTF2_Archive_SetDescription(archive: *mut Archive, description: *const c_char) -> ErrorCode;
    pub fn OTF2_Archive_OpenEvtFiles(archive: *mut Archive) -> ErrorCode;
    pub fn OTF2_Archive_CloseEvtFiles(archive: *mut Archive) -> ErrorCode;
    pub fn OTF2_Archive_GetEvtWriter(archive: *mut Archive, location: LocationRef) -> *mut EvtWriter;
    pub fn OTF2_Archive_CloseEvtWriter(archive: *mut Archive, writer: *mut EvtWriter) -> ErrorCode;
    pub fn OTF2_Archive_OpenDefFiles(archive: *mut Archive) -> ErrorCode;
    pub fn OTF2_Archive_CloseDefFiles(archive: *mut Archive) -> ErrorCode;
    pub fn OTF2_Archive_GetDefWriter(archive: *mut Archive, location: LocationRef) -> *mut DefWriter;
    pub fn OTF2_Archive_CloseDefWriter(archive: *mut Archive, writer: *mut DefWriter) -> ErrorCode;
    pub fn OTF2_Archive_GetGlobalDefWriter(archive: *mut Archive) -> *mut GlobalDefWriter;

    pub fn OTF2_EvtWriter_Enter(w: *mut EvtWriter, attributes: *mut c_void, time: TimeStamp, region: u32) -> ErrorCode;
    pub fn OTF2_EvtWriter_Leave(w: *mut EvtWriter, attributes: *mut c_void, time: TimeStamp, region: u32) -> ErrorCode;
    pub fn OTF2_EvtWriter_MpiSend(
        w: *mut EvtWriter,
        attributes: *mut c_void,
        time: TimeStamp,
        receiver: u32,
        communicator: u32,
        tag: u32,
        length: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_MpiRecv(
        w: *mut EvtWriter,
        attributes: *mut c_void,
        time: TimeStamp,
        sender: u32,
        communicator: u32,
        tag: u32,
        length: u64,
    ) -> ErrorCode;
    pub fn OTF2_EvtWriter_Metric(
        w: *mut EvtWriter,
        attributes: *mut c_void,
        time: TimeStamp,
        metric: u32,
        count: u8,
        types: *const u8,
        values: *const MetricValue,
    ) -> ErrorCode;

    pub fn OTF2_GlobalDefWriter_WriteClockProperties(
        w: *mut GlobalDefWriter,
        resolution: u64,
        global_offset: u64,
        length: u64,
        realtime: u64,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteString(w: *mut GlobalDefWriter, id: StringRef, text: *const c_char) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteRegion(
        w: *mut GlobalDefWriter,
        id: u32,
        name: StringRef,
        canonical_name: StringRef,
        description: StringRef,
        role: u8,
        paradigm: u8,
        flags: u32,
        source_file: StringRef,
        begin_line: u32,
        end_line: u32,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteSystemTreeNode(
        w: *mut GlobalDefWriter,
        id: u32,
        name: StringRef,
        class_name: StringRef,
        parent: u32,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteLocationGroup(
        w: *mut GlobalDefWriter,
        id: u32,
        name: StringRef,
        kind: u8,
        system_tree_parent: u32,
        creating_location_group: u32,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteLocation(
        w: *mut GlobalDefWriter,
        id: LocationRef,
        name: StringRef,
        kind: u8,
        events: u64,
        group: u32,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteGroup(
        w: *mut GlobalDefWriter,
        id: u32,
        name: StringRef,
        kind: u8,
        paradigm: u8,
        flags: u32,
        count: u32,
        members: *const u64,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteComm(
        w: *mut GlobalDefWriter,
        id: u32,
        name: StringRef,
        group: u32,
        parent: u32,
        flags: u32,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteMetricMember(
        w: *mut GlobalDefWriter,
        id: u32,
        name: StringRef,
        description: StringRef,
        metric_type: u8,
        mode: u8,
        value_type: u8,
        base: u8,
        exponent: i64,
        unit: StringRef,
    ) -> ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteMetricClass(
        w: *mut GlobalDefWriter,
        id: u32,
        count: u8,
        members: *const u32,
        occurrence: u8,
        recorder: u8,
    ) -> ErrorCode;
}
