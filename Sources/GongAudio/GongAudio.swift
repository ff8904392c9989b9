// GongAudio
