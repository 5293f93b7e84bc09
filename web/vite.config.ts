// Builds the client into server/transport/static, where the hub serves it. File names carry
// no content hash and the output depends only on the sources, so a fresh build reproduces the
// committed bundle byte for byte (scripts/test.sh checks that).
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: "src",
  base: "/static/",
  publicDir: false,
  build: {
    outDir: "../../server/transport/static",
    emptyOutDir: true,
    assetsDir: "",
    cssCodeSplit: false,
    modulePreload: false,
    reportCompressedSize: false,
    target: "es2022",
    rollupOptions: {
      output: {
        entryFileNames: "app.js",
        chunkFileNames: "[name].js",
        assetFileNames: "app[extname]",
      },
    },
  },
  test: { root: ".", include: ["test/**/*.test.ts"], environment: "node" },
});
