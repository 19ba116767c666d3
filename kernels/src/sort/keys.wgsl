// sort: map_key and unmap_key, which every WGSL sort kernel starts with.
//
// Keys move as 32-bit patterns that order like the keys: KEY_TYPE 0 u32,
// 1 i32 (sign bit flipped), 2 f32 (NaN made the positive quiet NaN, then
// the sign bit flipped for positives and every bit for negatives);
// DESCENDING complements them.
const KEY: u32 = KEY_TYPE;
const DESCEND: u32 = DESCENDING;

fn map_key(raw_in: u32) -> u32 {
    var raw = raw_in;
    var b = raw;
    if (KEY == 1u) {
        b = raw ^ 0x80000000u;
    } else if (KEY == 2u) {
        if ((raw & 0x7fffffffu) > 0x7f800000u) {
            raw = 0x7fc00000u;
        }
        b = select(raw | 0x80000000u, ~raw, (raw & 0x80000000u) != 0u);
    }
    if (DESCEND == 1u) {
        b = ~b;
    }
    return b;
}

fn unmap_key(b_in: u32) -> u32 {
    var b = b_in;
    if (DESCEND == 1u) {
        b = ~b;
    }
    if (KEY == 1u) {
        return b ^ 0x80000000u;
    } else if (KEY == 2u) {
        return select(~b, b & 0x7fffffffu, (b & 0x80000000u) != 0u);
    }
    return b;
}
