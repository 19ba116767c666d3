//! A kernel's parameter list, as its module image declares it.
//!
//! Drivers before CUDA 13.2 tell a parameter's size (`cuFuncGetParamInfo`)
//! but not how many parameters there are, and asking for an index past the
//! end is an error the driver logs (compute-sanitizer reports one per kernel
//! loaded). The image NVRTC made says how many:
//!
//! - A CUBIN describes each kernel in an ELF section `.nv.info.<name>`: a run
//!   of records on a 4-byte grid, each a format byte, an attribute byte and a
//!   value (none, a byte or a half-word in the next two bytes; or a 16-bit
//!   length and that many bytes). Every parameter has one
//!   `EIATTR_KPARAM_INFO` record (12 bytes: index, 16-bit ordinal, 16-bit
//!   offset, then flags with the size in their top 14 bits). NVIDIA does not
//!   document the layout; it is what `cuobjdump -elf` decodes, and it has held
//!   from sm_35 CUBINs to sm_90.
//! - PTX declares the parameters in the kernel's `.entry` line.
//!
//! Anything unexpected gives `None`: launches then go unchecked rather than
//! be refused for a wrong reason, and the driver's sizes are compared with a
//! CUBIN's before either is trusted.

/// `EIFMT_SVAL`: a 16-bit length, then that many bytes.
const FORMAT_SIZED: u8 = 0x04;
/// `EIATTR_KPARAM_INFO`: one kernel parameter.
const KPARAM_INFO: u8 = 0x17;

/// What the image declares about kernel `name`'s parameters: one entry per
/// parameter, with its byte size where the image gives it (a CUBIN does; PTX
/// gives the count). `None` when the image says nothing readable.
pub(crate) fn declared(image: &[u8], cubin: bool, name: &str) -> Option<Vec<Option<usize>>> {
    if cubin {
        let info = elf_section(image, &format!(".nv.info.{name}"))?;
        let sizes = kparam_sizes(info)?;
        Some(sizes.into_iter().map(Some).collect())
    } else {
        let end = image.iter().position(|&b| b == 0).unwrap_or(image.len());
        let count = ptx_param_count(std::str::from_utf8(&image[..end]).ok()?, name)?;
        Some(vec![None; count])
    }
}

/// Whether the driver's sizes agree with what the image declared.
pub(crate) fn agree(driver: &[usize], declared: &[Option<usize>]) -> bool {
    driver.len() == declared.len() && driver.iter().zip(declared).all(|(d, i)| i.is_none_or(|i| i == *d))
}

fn u16_at(d: &[u8], at: usize) -> Option<usize> {
    Some(u16::from_le_bytes(d.get(at..at + 2)?.try_into().ok()?) as usize)
}

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(d: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(d.get(at..at + 8)?.try_into().ok()?)).ok()
}

/// The contents of the section called `wanted` in a little-endian ELF64 image.
fn elf_section<'a>(image: &'a [u8], wanted: &str) -> Option<&'a [u8]> {
    if image.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let (table, entry_size, count, names) =
        (u64_at(image, 0x28)?, u16_at(image, 0x3a)?, u16_at(image, 0x3c)?, u16_at(image, 0x3e)?);
    if entry_size < 0x28 {
        return None;
    }
    // (name offset, file offset, size) of section `i`.
    let header = |i: usize| -> Option<(usize, usize, usize)> {
        let at = table.checked_add(i.checked_mul(entry_size)?)?;
        Some((u32_at(image, at)? as usize, u64_at(image, at + 0x18)?, u64_at(image, at + 0x20)?))
    };
    let contents = |offset: usize, size: usize| image.get(offset..offset.checked_add(size)?);
    let (_, names_at, names_size) = header(names)?;
    let names = contents(names_at, names_size)?;
    (0..count).find_map(|i| {
        let (name, offset, size) = header(i)?;
        let rest = names.get(name..)?;
        let name = &rest[..rest.iter().position(|&b| b == 0)?];
        (name == wanted.as_bytes()).then(|| contents(offset, size)).flatten()
    })
}

/// The parameter sizes a `.nv.info.<kernel>` section lists, by ordinal.
fn kparam_sizes(info: &[u8]) -> Option<Vec<usize>> {
    let mut by_ordinal: Vec<Option<usize>> = Vec::new();
    let mut at = 0;
    while at < info.len() {
        let (format, attribute) = (*info.get(at)?, *info.get(at + 1)?);
        let value_len = match format {
            0x01..=0x03 => 0,
            FORMAT_SIZED => u16_at(info, at + 2)?,
            _ => return None,
        };
        let value = info.get(at + 4..at + 4 + value_len)?;
        if format == FORMAT_SIZED && attribute == KPARAM_INFO {
            let ordinal = u16_at(value, 4)?;
            let size = (u32_at(value, 8)? >> 18) as usize;
            if by_ordinal.len() <= ordinal {
                by_ordinal.resize(ordinal + 1, None);
            }
            if by_ordinal[ordinal].replace(size).is_some() {
                return None;
            }
        }
        at += 4 + value_len.next_multiple_of(4);
    }
    // Every ordinal from 0 on, each once.
    by_ordinal.into_iter().collect()
}

/// How many parameters PTX's `.entry <name>(...)` declares.
fn ptx_param_count(ptx: &str, name: &str) -> Option<usize> {
    let mut rest = ptx;
    loop {
        let at = rest.find(".entry")?;
        rest = &rest[at + ".entry".len()..];
        let Some(after) = rest.trim_start().strip_prefix(name) else { continue };
        let after = after.trim_start();
        if after.starts_with('{') {
            return Some(0);
        }
        let Some(list) = after.strip_prefix('(') else { continue };
        let list = &list[..list.find(')')?];
        return Some(list.split(',').filter(|p| p.split_whitespace().next() == Some(".param")).count());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `.nv.info.mixed` as nvcc 13.0 wrote it for sm_90, for
    /// `mixed(char, double, struct { float a[3]; }, short, int*)`.
    const MIXED_INFO: &str = "043704008200000004170c00000000000400200000f0210004170c000000000003001c0000f0090004170c0000\
                              0000000200100000f0310004170c00000000000100080000f0210004170c00000000000000000000f00500035000\
                              00031bff00035f0101041c0400e000000003192800040a080013000000100228000436040008000000";
    /// `.nv.info.none`, for a kernel without parameters.
    const NONE_INFO: &str = "043704008200000003500000031bff00035f0101041c0400100000000436040008000000";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// A minimal ELF64 image: the named sections, then the section-name table.
    fn elf(sections: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut names = vec![0u8];
        let mut body = Vec::new();
        let mut headers = vec![[0u8; 64]]; // section 0 is null
        let mut add = |name: &str, data: &[u8], names: &mut Vec<u8>, body: &mut Vec<u8>| {
            let mut h = [0u8; 64];
            h[..4].copy_from_slice(&(names.len() as u32).to_le_bytes());
            names.extend_from_slice(name.as_bytes());
            names.push(0);
            h[0x18..0x20].copy_from_slice(&(64 + body.len() as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(data.len() as u64).to_le_bytes());
            body.extend_from_slice(data);
            headers.push(h);
        };
        for (name, data) in sections {
            add(name, data, &mut names, &mut body);
        }
        let names_copy = {
            let mut n = names.clone();
            n.extend_from_slice(b".shstrtab\0");
            n
        };
        add(".shstrtab", &names_copy, &mut names, &mut body);
        let mut image = vec![0u8; 64];
        image[..6].copy_from_slice(b"\x7fELF\x02\x01");
        image[0x28..0x30].copy_from_slice(&(64 + body.len() as u64).to_le_bytes());
        image[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        image[0x3c..0x3e].copy_from_slice(&(headers.len() as u16).to_le_bytes());
        image[0x3e..0x40].copy_from_slice(&(headers.len() as u16 - 1).to_le_bytes());
        image.extend_from_slice(&body);
        headers.iter().for_each(|h| image.extend_from_slice(h));
        image
    }

    #[test]
    fn a_cubin_lists_each_parameter_with_its_size() {
        let image = elf(&[(".nv.info.mixed", hex(MIXED_INFO)), (".nv.info.none", hex(NONE_INFO))]);
        let mixed = declared(&image, true, "mixed").unwrap();
        assert_eq!(mixed, [1, 8, 12, 2, 8].map(Some));
        assert_eq!(declared(&image, true, "none").unwrap(), []);
        assert_eq!(declared(&image, true, "absent"), None);
        assert!(agree(&[1, 8, 12, 2, 8], &mixed));
        assert!(!agree(&[1, 8, 12, 2], &mixed) && !agree(&[1, 8, 12, 2, 4], &mixed));
    }

    #[test]
    fn damaged_images_declare_nothing() {
        let info = hex(MIXED_INFO);
        assert_eq!(kparam_sizes(&info[..info.len() - 3]), None, "truncated record");
        let mut unknown = info.clone();
        unknown[0] = 0x09;
        assert_eq!(kparam_sizes(&unknown), None, "unknown record format");
        // Ordinal 3 missing: a gap is not a parameter list.
        let ordinal_3 = "04170c000000000003001c0000f00900";
        assert!(MIXED_INFO.contains(ordinal_3));
        assert_eq!(kparam_sizes(&hex(&MIXED_INFO.replace(ordinal_3, ""))), None);
        // Ordinal 3 twice.
        assert_eq!(kparam_sizes(&hex(&MIXED_INFO.replace(ordinal_3, &ordinal_3.repeat(2)))), None);
        assert_eq!(declared(b"\x7fELF\x01\x01", true, "mixed"), None, "ELF32");
        assert_eq!(declared(b"not an image", true, "mixed"), None);
        let mut bad_table = elf(&[(".nv.info.mixed", info)]);
        bad_table[0x2f] = 0x7f; // a section table far past the end
        assert_eq!(declared(&bad_table, true, "mixed"), None);
    }

    #[test]
    fn ptx_declares_the_parameters_of_its_entries() {
        let ptx = "\
.version 9.0\n.target sm_90\n.address_size 64\n\n\
.visible .entry mixed_helper(\n\t.param .u64 mixed_helper_param_0\n)\n{\n\tret;\n}\n\
.visible .entry mixed(\n\t.param .u8 mixed_param_0,\n\t.param .f64 mixed_param_1,\n\
\t.param .align 4 .b8 mixed_param_2[12],\n\t.param .u16 mixed_param_3,\n\t.param .u64 .ptr .global .align 4 mixed_param_4\n)\n\
{\n\tret;\n}\n.visible .entry none()\n{\n\tret;\n}\n.entry bare\n{\n\tret;\n}\n\0";
        assert_eq!(declared(ptx.as_bytes(), false, "mixed").unwrap().len(), 5);
        assert_eq!(declared(ptx.as_bytes(), false, "mixed_helper").unwrap().len(), 1);
        assert_eq!(declared(ptx.as_bytes(), false, "none").unwrap().len(), 0);
        assert_eq!(declared(ptx.as_bytes(), false, "bare").unwrap().len(), 0);
        assert_eq!(declared(ptx.as_bytes(), false, "absent"), None);
        assert!(agree(&[1, 8, 12, 2, 8], &declared(ptx.as_bytes(), false, "mixed").unwrap()));
    }
}
