declare module 'virtual:emoji-names' {
  const rows: [string, string][];
  export default rows;
}
