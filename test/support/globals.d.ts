// Tests read JSON bodies of many shapes; asserting on them is the point, so `any` is the right type.
declare global {
  interface Response {
    json(): Promise<any>;
  }
}

export {};
