// The conversation's files, each downloaded once with the visitor's headers (media is not
// public) and kept as an object URL until the widget is destroyed.
import type { ClientApi } from './api.ts';
import type { MediaView } from './types.ts';
import { mediaPath, type FileLink } from './ui/message-view.ts';

export class ConversationFiles {
  private readonly files = new Map<string, Promise<FileLink>>();

  constructor(private readonly api: ClientApi) {}

  /** A conversation file: its object URL, and its size from the bytes Palaver sent. */
  file(media: MediaView): Promise<FileLink> {
    const path = mediaPath(media);
    let file = this.files.get(path);
    if (!file) {
      file = this.api.media(path).then((blob) => ({ url: URL.createObjectURL(blob), size: blob.size }));
      file.catch(() => this.files.delete(path));
      this.files.set(path, file);
    }
    return file;
  }

  release(): void {
    for (const file of this.files.values())
      void file.then(
        ({ url }) => URL.revokeObjectURL(url),
        () => undefined,
      );
  }
}
