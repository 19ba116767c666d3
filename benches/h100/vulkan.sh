# Sourced by the scripts here, on the GPU machine: the Vulkan loader and
# glvnd from .gl/ unpacked into /, and NVIDIA's ICD named where the image
# does not list it.
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
if ! ls /usr/share/vulkan/icd.d/*nvidia* >/dev/null 2>&1 && ! ls /etc/vulkan/icd.d/*nvidia* >/dev/null 2>&1; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
