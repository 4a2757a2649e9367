// A published file on the catalog server's HTTP gateway (GET /data/<NDN name>): the download
// link for browsers without NDN. The name's URI is percent-encoded once more for HTTP, as the
// gateway (and ESGF records) expect.
export function dataUrl(name: string): string {
  return "/data" + name.split("/").map(encodeURIComponent).join("/");
}
