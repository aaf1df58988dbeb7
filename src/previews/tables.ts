export interface ServerSecretTable {
  name: string;
  value: string;
}

export interface PreviewTables {
  server_secrets: ServerSecretTable;
}
