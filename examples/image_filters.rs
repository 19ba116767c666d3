//! Image filters on a picture file: RGB (or RGBA) to gray with the seed's
//! weights, then a 5 x 5 Gaussian blur of the gray image (mirrored at the
//! edges), read and written with the `image` crate (PNG or JPEG). Without
//! `--input`, a generated test picture is used. Both results are checked
//! against the host's computation and written as PNG files. Written on the
//! run-time tier.
//!
//! ```sh
//! cargo run --release --example image_filters -- --backend cpu --input photo.jpg --output-dir /tmp
//! ```

mod common;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kiln::Error;
use kiln::kernels::image::{Blur, Border, PixelFormat, blur, gray};

/// An interleaved 8-bit picture: RGB or RGBA.
#[derive(Clone)]
struct Picture {
    width: usize,
    height: usize,
    format: PixelFormat,
    bytes: Vec<u8>,
}

/// A test picture: colour gradients, a checkerboard and a bright disc, so the
/// gray image has edges, flat areas and fine detail for the blur to soften.
fn test_picture(width: usize, height: usize) -> Picture {
    let mut bytes = Vec::with_capacity(width * height * 3);
    for y in 0..height {
        for x in 0..width {
            let (dx, dy) = (x as f64 - width as f64 / 2.0, y as f64 - height as f64 / 2.0);
            let disc = dx * dx + dy * dy < (width.min(height) as f64 / 4.0).powi(2);
            let check = ((x / 16) + (y / 16)) % 2 == 0;
            let r = if disc { 250 } else { (255 * x / width.max(1)) as u8 };
            let g = if disc { 240 } else { (255 * y / height.max(1)) as u8 };
            let b = if check { 200 } else { 30 };
            bytes.extend_from_slice(&[r, g, b]);
        }
    }
    Picture { width, height, format: PixelFormat::Rgb, bytes }
}

fn io_error(what: &str, path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io { what: what.to_string(), path: path.display().to_string(), detail: e.to_string() }
}

/// Read a PNG or JPEG file: RGBA when it has an alpha channel, RGB otherwise.
fn read_picture(path: &Path) -> kiln::Result<Picture> {
    let img = image::open(path).map_err(|e| io_error("reading the picture", path, e))?;
    let (width, height) = (img.width() as usize, img.height() as usize);
    Ok(if img.color().has_alpha() {
        Picture { width, height, format: PixelFormat::Rgba, bytes: img.to_rgba8().into_raw() }
    } else {
        Picture { width, height, format: PixelFormat::Rgb, bytes: img.to_rgb8().into_raw() }
    })
}

/// Write a gray picture as PNG.
fn write_gray(path: &Path, width: usize, height: usize, pixels: Vec<u8>) -> kiln::Result<()> {
    let img = image::GrayImage::from_raw(width as u32, height as u32, pixels)
        .ok_or_else(|| io_error("writing the picture", path, "pixel count does not match the size"))?;
    img.save(path).map_err(|e| io_error("writing the picture", path, e))
}

/// The host's gray: `(299 r + 587 g + 114 b) / 1000`, truncated.
fn host_gray(p: &Picture) -> Vec<u8> {
    let ch = p.format.channels();
    p.bytes
        .chunks_exact(ch)
        .map(|c| ((299 * c[0] as u32 + 587 * c[1] as u32 + 114 * c[2] as u32) / 1000) as u8)
        .collect()
}

/// The host's 5 x 5 binomial blur (weights [1 4 6 4 1] x [1 4 6 4 1] / 256),
/// mirrored at the edges, rounded half up.
fn host_blur(g: &[u8], width: usize, height: usize) -> Vec<u8> {
    const W: [u32; 5] = [1, 4, 6, 4, 1];
    let mirror = |i: i64, n: i64| -> usize {
        let mut j = i;
        while !(0..n).contains(&j) {
            j = if j < 0 { -1 - j } else { 2 * n - 1 - j };
        }
        j as usize
    };
    let mut out = Vec::with_capacity(width * height);
    for y in 0..height as i64 {
        for x in 0..width as i64 {
            let mut sum = 0u32;
            for (i, wy) in W.iter().enumerate() {
                let sy = mirror(y + i as i64 - 2, height as i64);
                for (j, wx) in W.iter().enumerate() {
                    let sx = mirror(x + j as i64 - 2, width as i64);
                    sum += wy * wx * g[sy * width + sx] as u32;
                }
            }
            out.push(((sum as f32 / 256.0 + 0.5).floor()) as u8);
        }
    }
    out
}

/// Gray and blur `picture` on a device, check both, write both into `out_dir`.
struct Filters {
    picture: Picture,
    out_dir: PathBuf,
}

impl Filters {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let p = &self.picture;
        let (w, h) = (p.width, p.height);
        let s = dev.stream();
        let input = dev.upload(&p.bytes)?;
        let mut g = dev.alloc::<u8>(w * h)?;
        let mut blurred = dev.alloc::<u8>(w * h)?;
        gray(&s, p.format, &input, w, h, &mut g)?;
        blur(&s, Blur::Gaussian5, &g, w, h, Border::Reflect, &mut blurred)?;
        let (got_gray, got_blur) = (g.to_vec()?, blurred.to_vec()?);
        let want_gray = host_gray(p);
        common::check("gray", &got_gray, &want_gray, |a, b| a == b)?;
        common::check("blur", &got_blur, &host_blur(&want_gray, w, h), |a, b| a == b)?;
        std::fs::create_dir_all(&self.out_dir)
            .map_err(|e| io_error("creating the output directory", &self.out_dir, e))?;
        let (gray_path, blur_path) = (self.out_dir.join("gray.png"), self.out_dir.join("blur.png"));
        write_gray(&gray_path, w, h, got_gray)?;
        write_gray(&blur_path, w, h, got_blur)?;
        Ok(format!(
            "{w} x {h} {} picture: gray -> {}, 5 x 5 Gaussian blur -> {}",
            p.format.name(),
            gray_path.display(),
            blur_path.display()
        ))
    }
}

/// `--input FILE` and `--output-dir DIR`, taken out of `args`; the rest is left for `--backend`.
fn take_paths(args: &mut Vec<String>) -> kiln::Result<(Option<PathBuf>, Option<PathBuf>)> {
    let mut take = |flag: &str| -> kiln::Result<Option<PathBuf>> {
        let prefix = format!("{flag}=");
        if let Some(i) = args.iter().position(|a| a == flag) {
            if i + 1 >= args.len() {
                return Err(Error::invalid("arguments", format!("{flag} needs a path")));
            }
            let value = args.remove(i + 1);
            args.remove(i);
            return Ok(Some(PathBuf::from(value)));
        }
        if let Some(i) = args.iter().position(|a| a.starts_with(&prefix)) {
            return Ok(Some(PathBuf::from(&args.remove(i)[prefix.len()..])));
        }
        Ok(None)
    };
    Ok((take("--input")?, take("--output-dir")?))
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let setup = take_paths(&mut args).and_then(|(input, out_dir)| {
        let picture = match input {
            Some(path) => read_picture(&path)?,
            None => test_picture(640, 480),
        };
        let out_dir = out_dir.unwrap_or_else(|| std::env::temp_dir().join("kiln-image-filters"));
        Ok(Filters { picture, out_dir })
    });
    let filters = match setup {
        Ok(f) => f,
        Err(e) => {
            eprintln!("image_filters: {e} (usage: [--backend cpu|cuda|wgpu] [--input FILE] [--output-dir DIR])");
            return ExitCode::from(2);
        }
    };
    // What is left of the arguments is for the harness: `--backend`.
    common::run_with_args("image_filters", &args, |dev| filters.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_on_every_backend_and_round_trips_the_files() {
        let dir = std::env::temp_dir().join(format!("kiln-image-filters-test-{}", std::process::id()));
        for (w, h) in [(1, 1), (3, 70), (61, 37)] {
            let picture = test_picture(w, h);
            let filters = Filters { picture: picture.clone(), out_dir: dir.clone() };
            common::on_every_device(|dev| filters.run(dev));
            // The written gray image reads back as the host's gray.
            let back = image::open(dir.join("gray.png")).unwrap().to_luma8().into_raw();
            assert_eq!(back, host_gray(&picture));
        }
        // An RGBA file goes through the RGBA path.
        let path = dir.join("rgba.png");
        let rgba = image::RgbaImage::from_fn(9, 5, |x, y| image::Rgba([(x * 20) as u8, (y * 40) as u8, 7, 128]));
        rgba.save(&path).unwrap();
        let picture = read_picture(&path).unwrap();
        assert_eq!(picture.format, PixelFormat::Rgba);
        let filters = Filters { picture, out_dir: dir.clone() };
        common::on_every_device(|dev| filters.run(dev));
        assert!(read_picture(&dir.join("missing.png")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn paths_are_taken_out_of_the_arguments() {
        let mut args: Vec<String> =
            ["--backend", "cpu", "--input", "a.png", "--output-dir=out"].map(String::from).to_vec();
        let (input, out) = take_paths(&mut args).unwrap();
        assert_eq!((input, out), (Some(PathBuf::from("a.png")), Some(PathBuf::from("out"))));
        assert_eq!(args, vec!["--backend".to_string(), "cpu".to_string()]);
        assert!(take_paths(&mut vec!["--input".to_string()]).is_err());
    }
}
