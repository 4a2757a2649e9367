/** Hand a Blob to the browser's download manager under `fileName`. */
export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  link.rel = "noopener";
  document.body.append(link);
  link.click();
  link.remove();
  // the download has started from the URL; keep it a moment for slow browsers
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
